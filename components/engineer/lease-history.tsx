"use client";

import type { LeaseTermView } from "@/lib/api/contract/engineer/steps";
import { Time } from "@/components/ui/time";
import { shortId } from "./api";
import styles from "./engineer.module.css";

const endLabels: Record<NonNullable<LeaseTermView["endReason"]>, { label: string; symbol: string }> = {
  receipt: { label: "released after its receipt", symbol: "✓" },
  released: { label: "released (handed back)", symbol: "↩" },
  expired: { label: "expired on the database clock", symbol: "◔" },
  revoked: { label: "revoked by an engineer", symbol: "⊘" },
  failed: { label: "released after a failure report", symbol: "↩" },
};

const ms = (iso: string) => new Date(iso).getTime();

/**
 * The lease history: one row per fencing term. A lane shows the held interval on one shared
 * wall-clock axis (renewals as ticks, the end as a symbol, refused writes as ✕); the columns say
 * the same in words and database times, so the lane is decoration for sighted readers only.
 */
export function LeaseHistory({ leases, dbNow }: { leases: readonly LeaseTermView[]; dbNow: string }) {
  if (leases.length === 0) return <p className="state">No lease yet: the step has never been claimed.</p>;
  const start = Math.min(...leases.map((l) => ms(l.leasedAt)));
  const end = Math.max(
    ms(dbNow),
    ...leases.flatMap((l) => [ms(l.endedAt ?? l.expiresAt), ...l.rejections.map((r) => ms(r.at)), ...l.events.map((e) => ms(e.at))]),
  );
  const span = Math.max(1, end - start);
  const pos = (iso: string) => `${(((ms(iso) - start) / span) * 100).toFixed(2)}%`;

  return (
    <div className={styles.tableWrap}>
      <table aria-label="Lease history, one row per fencing term">
        <thead>
          <tr>
            <th scope="col">Term</th>
            <th scope="col">Epoch</th>
            <th scope="col">Holder session</th>
            <th scope="col">Acquired</th>
            <th scope="col">Renewals</th>
            <th scope="col">Ended</th>
            <th scope="col">Refused writes under this term</th>
            <th scope="col" style={{ minWidth: "14rem" }}>
              Held (shared time axis)
            </th>
          </tr>
        </thead>
        <tbody>
          {leases.map((lease) => {
            const lastRenewal = [...lease.events].reverse().find((e) => e.kind === "renewed");
            const endEvent = [...lease.events].reverse().find((e) => e.kind === "expiry_observed" || e.kind === "released" || e.kind === "revoked");
            const heldUntil = lease.endedAt ?? (ms(lease.expiresAt) < ms(dbNow) ? lease.expiresAt : dbNow);
            return (
              <tr key={lease.fencingTerm} data-term={lease.fencingTerm}>
                <th scope="row" className={styles.numeric}>
                  {lease.fencingTerm}
                </th>
                <td className={styles.numeric}>{lease.epoch}</td>
                <td>
                  <span className="mono" title={lease.ownerSessionId}>
                    {shortId(lease.ownerSessionId)}
                  </span>
                </td>
                <td>
                  <Time value={lease.leasedAt} precise />
                </td>
                <td>
                  <span className={styles.numeric}>{lease.renewals}</span>
                  {lease.renewalRefusals > 0 ? <span className="badge warn"> {lease.renewalRefusals} refused</span> : null}
                  {lastRenewal ? (
                    <div className="muted">
                      last <Time value={lastRenewal.at} precise />
                    </div>
                  ) : null}
                </td>
                <td>
                  {lease.endReason ? (
                    <>
                      <span aria-hidden="true">{endLabels[lease.endReason].symbol} </span>
                      {endLabels[lease.endReason].label}
                      <div className="muted">
                        <Time value={lease.endedAt} precise />
                      </div>
                      {endEvent?.reason && endEvent.reason !== endLabels[lease.endReason].label ? <div className="muted">{endEvent.reason}</div> : null}
                    </>
                  ) : ms(lease.expiresAt) <= ms(dbNow) ? (
                    <>
                      <span className="badge warn">past expiresAt, not yet observed</span>
                      <div className="muted">
                        expires <Time value={lease.expiresAt} precise />
                      </div>
                    </>
                  ) : (
                    <>
                      <span className="badge ok">current</span>
                      <div className="muted">
                        expires <Time value={lease.expiresAt} precise />
                      </div>
                    </>
                  )}
                  <details>
                    <summary>{lease.events.length} events</summary>
                    <ol className={styles.events}>
                      {lease.events.map((event) => (
                        <li key={event.id}>
                          {event.kind.replaceAll("_", " ")} · <Time value={event.at} precise />
                          {event.reason ? (
                            // A refusal's reason is a code of the engine's vocabulary; other events carry prose.
                            <span className="muted"> — {event.kind === "renewal_refused" ? event.reason.replaceAll("_", " ") : event.reason}</span>
                          ) : null}
                        </li>
                      ))}
                    </ol>
                  </details>
                </td>
                <td>
                  {lease.rejections.length === 0 ? (
                    <span className="muted">none</span>
                  ) : (
                    lease.rejections.map((rejection) => (
                      <span key={rejection.id} className={styles.rejection} data-testid="fencing-rejection">
                        <span aria-hidden="true">✕ </span>
                        {rejection.operation.replaceAll("_", " ")} rejected: presented term {rejection.presentedTerm}
                        {rejection.currentTerm !== null ? `, current term ${rejection.currentTerm}` : ", no current term"} ({rejection.reason.replaceAll("_", " ")})
                        <br />
                        <Time value={rejection.at} precise />
                      </span>
                    ))
                  )}
                </td>
                <td>
                  <div className={styles.lane} aria-hidden="true">
                    <div
                      className={`${styles.held} ${lease.endedAt ? "" : styles.heldOpen}`}
                      style={{ left: pos(lease.leasedAt), width: `max(2px, calc(${pos(heldUntil)} - ${pos(lease.leasedAt)}))` }}
                    />
                    {lease.events
                      .filter((e) => e.kind === "renewed")
                      .map((e) => (
                        <span key={e.id} className={styles.tick} style={{ left: pos(e.at) }} />
                      ))}
                    {lease.endReason && lease.endedAt ? (
                      <span className={styles.endMark} style={{ left: pos(lease.endedAt) }}>
                        {endLabels[lease.endReason].symbol}
                      </span>
                    ) : null}
                    {lease.rejections.map((r) => (
                      <span key={r.id} className={styles.rejectMark} style={{ left: pos(r.at) }} title={`rejected: term ${r.presentedTerm} vs current ${r.currentTerm ?? "none"}`}>
                        ✕
                      </span>
                    ))}
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
