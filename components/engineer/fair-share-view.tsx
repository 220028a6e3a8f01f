"use client";

import { useQuery } from "@tanstack/react-query";
import type { FairShareViewDto } from "@/lib/api/contract/engineer/fair-share";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { POLL_MS, engineerKeys, getJson } from "./api";
import styles from "./engineer.module.css";

type KeyLoad = FairShareViewDto["busiest"][number];

const waited = (ms: number | null) => (ms === null ? "—" : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`);

function KeyTable({ caption, keys }: { caption: string; keys: KeyLoad[] }) {
  return (
    <div className={styles.tableWrap}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Kind</th>
            <th scope="col">Concurrency key</th>
            <th scope="col">Ready</th>
            <th scope="col">Queued behind its limit</th>
            <th scope="col">In flight</th>
            <th scope="col">Limit per key</th>
            <th scope="col">Oldest ready step waiting</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={`${key.kind}\u0000${key.key}`} data-key={key.key}>
              <td>{key.kind}</td>
              <td className="mono">{key.key}</td>
              <td>{key.ready}</td>
              <td>{key.queued > 0 ? <span className="badge warn">{key.queued}</span> : 0}</td>
              <td>{key.limitPerKey !== null && key.inFlight >= key.limitPerKey ? <span className="badge info">{key.inFlight} (at its limit)</span> : key.inFlight}</td>
              <td>{key.limitPerKey ?? <span className="muted">none</span>}</td>
              <td>
                {waited(key.waitingMs)}
                {key.waitingSince ? (
                  <div className="muted">
                    since <Time value={key.waitingSince} precise />
                  </div>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Concurrency keys and destination rates as they stand, refreshed every few seconds. */
export function FairShareView({ initial }: { initial: FairShareViewDto }) {
  const { data, error } = useQuery({
    queryKey: engineerKeys.fairShare(),
    queryFn: () => getJson<FairShareViewDto>("/api/fair-share"),
    initialData: initial,
    refetchInterval: POLL_MS,
  });
  const view = data ?? initial;

  return (
    <div className="stack">
      {error ? <ErrorState what="the latest fair-share figures (showing the last ones loaded)" error={error} /> : null}
      <p className="muted">
        Ready steps are claimed highest priority first; within a priority, keys take turns (a kind may say oldest first instead), and a
        kind&apos;s limit per key holds the rest of a key&apos;s steps back, without a lease, until one of its steps ends. Counts are of now,
        by the database clock (<Time value={view.dbNow} precise />
        ).
      </p>

      <section aria-labelledby="waiting-longest">
        <h2 id="waiting-longest">Keys waiting longest</h2>
        {view.waitingLongest.length === 0 ? <Empty>No concurrency key has a step waiting.</Empty> : <KeyTable caption="Keys whose oldest ready step has waited longest" keys={view.waitingLongest} />}
      </section>

      <section aria-labelledby="busiest-keys">
        <h2 id="busiest-keys">Busiest keys</h2>
        <p className="muted">
          {view.activeKeys} {view.activeKeys === 1 ? "key has" : "keys have"} steps ready or in flight
          {view.activeKeys > view.busiest.length ? `; the ${view.busiest.length} with the most are shown` : ""}. Requests without a key are not
          counted here.
        </p>
        {view.busiest.length === 0 ? <Empty>No request with a concurrency key has work now.</Empty> : <KeyTable caption="Keys with the most steps ready, queued or in flight" keys={view.busiest} />}
      </section>

      <section aria-labelledby="destination-rates">
        <h2 id="destination-rates">Destination rates</h2>
        {view.destinations.length === 0 ? (
          <Empty>No adapter declares a rate. An adapter&apos;s rate (calls per second) is enforced across every worker at the permit.</Empty>
        ) : (
          <div className={styles.tableWrap}>
            <table>
              <caption className="visually-hidden">Destinations with a declared rate</caption>
              <thead>
                <tr>
                  <th scope="col">Destination</th>
                  <th scope="col">Rate</th>
                  <th scope="col">Calls in the last second</th>
                  <th scope="col">Calls under way</th>
                  <th scope="col">Steps waiting for a call slot</th>
                </tr>
              </thead>
              <tbody>
                {view.destinations.map((destination) => (
                  <tr key={destination.adapter} data-destination={destination.adapter}>
                    <td className="mono">{destination.adapter}</td>
                    <td>
                      {destination.perSecond}/s, burst {destination.burst} <span className="muted">(declared by version {destination.declaredBy})</span>
                    </td>
                    <td>
                      <meter min={0} max={destination.perSecond} value={destination.callsLastSecond} aria-label={`${destination.adapter}: calls in the last second`} />{" "}
                      {destination.callsLastSecond} of {destination.perSecond}
                    </td>
                    <td>{destination.inFlight}</td>
                    <td>{destination.waiting > 0 ? <span className="badge warn">{destination.waiting}</span> : 0}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section aria-labelledby="kind-settings">
        <h2 id="kind-settings">Settings per kind</h2>
        {view.kinds.length === 0 ? (
          <Empty>No workflow kind is registered yet.</Empty>
        ) : (
          <div className={styles.tableWrap}>
            <table>
              <caption className="visually-hidden">Fair share per workflow kind, as declared and as overridden</caption>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">Limit per key</th>
                  <th scope="col">Between keys</th>
                  <th scope="col">Default priority</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {view.kinds.map((kind) => (
                  <tr key={kind.kind} data-kind={kind.kind}>
                    <td>{kind.kind}</td>
                    <td>{kind.effective.limitPerKey ?? <span className="muted">none</span>}</td>
                    <td>{kind.effective.fairness === "round-robin" ? "keys take turns" : "oldest first"}</td>
                    <td>{kind.declared.priority}</td>
                    <td>
                      {kind.override ? (
                        <>
                          <span className="badge info">overridden</span> by {kind.override.setBy}, <Time value={kind.override.setAt} />: {kind.override.reason}
                        </>
                      ) : (
                        `declared by version ${kind.declared.version}`
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p className="muted">Admins override a kind&apos;s limit and rule on the Admin page; every change is in the audit log.</p>
      </section>
    </div>
  );
}
