"use client";

import type { Route } from "next";
import Link from "next/link";
import type { StepDetail, StepSummary } from "@/lib/api/contract/engineer/steps";
import { Empty } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { shortId } from "./api";
import styles from "./engineer.module.css";

type Wait = NonNullable<StepDetail["wait"]>;
type EventWait = Extract<Wait, { room: "event" }>;

/** A waiting step in a list: what it waits for and until when. */
export function WaitLine({ wait }: { wait: NonNullable<StepSummary["wait"]> }) {
  return (
    <div className={styles.waitLine} data-testid="wait-summary">
      {wait.event ? (
        <>
          waits for event <span className="mono">{wait.event.name}</span> · key <span className="mono">{wait.event.key}</span>
        </>
      ) : wait.children ? (
        `waits for children: ${wait.children.ended} of ${wait.children.total} ended`
      ) : (
        "waits for a time"
      )}
      <div className="muted">
        since <Time value={wait.since} />
        {wait.children ? null : <> · {wait.until ? <>until <Time value={wait.until} /></> : "no timeout"}</>}
      </div>
    </div>
  );
}

function requestedWords(requested: Extract<Wait, { room: "timer" }>["requested"]): string {
  if ("afterMs" in requested) return `${requested.afterMs} ms after the step became ready`;
  return `at ${requested.at}${requested.timeZone ? ` (${requested.timeZone})` : ""}`;
}

function EventsForKey({ wait, stepId }: { wait: EventWait; stepId: string }) {
  if (wait.events.length === 0) return <Empty>No event received yet for {wait.name} with this key.</Empty>;
  return (
    <div className={styles.tableWrap}>
      <table>
        <caption>
          Events received for <span className="mono">{wait.name}</span> · key <span className="mono">{wait.key}</span>, newest first
          {wait.moreEvents ? ` (the newest ${wait.events.length})` : ""}
        </caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Sender</th>
            <th scope="col">Received</th>
            <th scope="col">Consumed</th>
          </tr>
        </thead>
        <tbody>
          {wait.events.map((event) => (
            <tr key={event.id} data-event={event.id}>
              <td className="mono" title={event.id}>
                {shortId(event.id)}
              </td>
              <td className="mono">{event.sender}</td>
              <td>
                <Time value={event.receivedAt} precise />
              </td>
              <td>
                {event.consumedAt ? (
                  <>
                    <span className="badge ok">consumed</span>{" "}
                    {event.consumedByStepId === stepId ? (
                      "by this step"
                    ) : event.consumedByStepId ? (
                      <>
                        by <Link href={`/steps/${event.consumedByStepId}` as Route}>step {shortId(event.consumedByStepId)}</Link>
                      </>
                    ) : null}{" "}
                    <Time value={event.consumedAt} precise />
                  </>
                ) : event.expired ? (
                  <>
                    <span className="badge bad">expired</span> unconsumed at <Time value={event.keepUntil} />
                  </>
                ) : (
                  <>
                    <span className="badge warn">not consumed</span> kept until <Time value={event.keepUntil} />
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the step waits (or waited) for, since and until when, and for an event wait the events received for its key. */
export function StepWait({ wait, stepId }: { wait: Wait; stepId: string }) {
  return (
    <div className="stack">
      <dl className={`card ${styles.facts}`} aria-label="The wait">
        <div>
          <dt>Waits for</dt>
          <dd data-testid="waits-for">
            {wait.room === "timer" ? (
              `a time: ${requestedWords(wait.requested)}`
            ) : (
              <>
                event <span className="mono">{wait.name}</span> · key <span className="mono">{wait.key}</span>
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Wait state</dt>
          <dd>
            <span className={`badge ${wait.state === "waiting" ? "info" : "ok"}`}>{wait.state.replaceAll("_", " ")}</span>
          </dd>
        </div>
        <div>
          <dt>Since (database clock)</dt>
          <dd>
            <Time value={wait.armedAt} precise />
          </dd>
        </div>
        <div>
          <dt>{wait.room === "timer" ? "Due" : `Times out (then ${wait.onTimeout === "fail" ? "the request fails" : "the steps after it continue"})`}</dt>
          <dd>{wait.room === "timer" ? <Time value={wait.dueAt} precise /> : wait.timeoutAt ? <Time value={wait.timeoutAt} precise /> : "never"}</dd>
        </div>
        <div>
          <dt>{wait.room === "timer" ? "Fired or cancelled" : "Settled"}</dt>
          <dd>
            <Time value={wait.settledAt} precise />
          </dd>
        </div>
        {wait.room === "event" ? (
          <div>
            <dt>One-time URL</dt>
            <dd className="mono" data-testid="wait-url">
              {wait.url ?? <span className="muted">none</span>}
            </dd>
          </div>
        ) : null}
      </dl>
      {wait.room === "event" ? <EventsForKey wait={wait} stepId={stepId} /> : null}
    </div>
  );
}
