"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { Route } from "next";
import Link from "next/link";
import { useState } from "react";
import { call } from "@/components/admin/call";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import type { ScheduleView } from "@/lib/schedules/types";
import { POLL_MS, engineerKeys, getJson, shortId } from "./api";
import styles from "./engineer.module.css";

const overlapWords = { skip: "skip while the previous runs", queue_one: "queue one behind the previous", allow: "allow overlap" } as const;
const catchUpWords = (schedule: ScheduleView) =>
  schedule.catchUp === "none" ? "no catch-up" : schedule.catchUp === "latest" ? "catch up the latest missed" : `catch up all missed, at most ${schedule.catchUpLimit}`;
const firingBadge = { started: "ok", skipped: "muted", queued: "info", failed: "warn" } as const;

function Firings({ schedule }: { schedule: ScheduleView }) {
  if (schedule.lastFirings.length === 0) return <span className="muted">none yet</span>;
  return (
    <ul aria-label={`Last firings of ${schedule.name}`}>
      {schedule.lastFirings.map((firing) => (
        <li key={firing.dueAt} data-firing-state={firing.state}>
          <Time value={firing.dueAt} precise /> <span className={`badge ${firingBadge[firing.state]}`}>{firing.state}</span>{" "}
          {firing.requestId ? (
            <Link href={`/steps?workflow=${firing.requestId}` as Route} className="mono">
              request {shortId(firing.requestId)}
            </Link>
          ) : null}
          {firing.requestStatus ? <span className="muted"> ({firing.requestStatus})</span> : null}
          {firing.state === "started" ? <span className="muted"> {Math.max(0, firing.latenessMs)} ms late</span> : null}
          {firing.reason ? <div className="muted">{firing.reason}</div> : null}
        </li>
      ))}
    </ul>
  );
}

/** Every schedule: its cadence and policies, next 5 due times, last firings and their requests; pause, resume and delete for admins. */
export function SchedulesView({ initial, canManage }: { initial: ScheduleView[]; canManage: boolean }) {
  const queryClient = useQueryClient();
  const [message, setMessage] = useState<string | null>(null);
  const { data, error } = useQuery({
    queryKey: engineerKeys.schedules(),
    queryFn: async () => (await getJson<{ items: ScheduleView[] }>("/api/schedules?limit=100")).items,
    initialData: initial,
    refetchInterval: POLL_MS,
  });
  const schedules = data ?? initial;

  async function change(schedule: ScheduleView, action: "pause" | "resume" | "delete") {
    if (action === "delete" && !window.confirm(`Delete the schedule ${schedule.name}? The requests it started stay.`)) return;
    const path = `/api/schedules/${encodeURIComponent(schedule.name)}`;
    const result = action === "delete" ? await call("DELETE", path) : await call("POST", `${path}/${action}`);
    setMessage(result.ok ? `${schedule.name}: ${action === "pause" ? "paused" : action === "resume" ? "resumed" : "deleted"}.` : `Refused: ${result.detail}`);
    await queryClient.invalidateQueries({ queryKey: engineerKeys.schedules() });
  }

  return (
    <div className="stack">
      {error ? <ErrorState what="the latest schedules (showing the last ones loaded)" error={error} /> : null}
      <p className="muted">
        Each due time starts at most one request, whichever coordinator reaches it first; due times are read on the schedule&apos;s time zone, a
        local time lived twice is due once. Pausing drops what falls due while paused; resuming starts from the next due time.
      </p>
      {message ? <p role="status">{message}</p> : null}
      {schedules.length === 0 ? (
        <Empty>No schedule yet: an admin or an app creates one through the API, or the adopter&apos;s code registers one with defineSchedule.</Empty>
      ) : (
        <div className={styles.tableWrap}>
          <table>
            <thead>
              <tr>
                <th scope="col">Schedule</th>
                <th scope="col">Starts</th>
                <th scope="col">When</th>
                <th scope="col">Next 5 due times</th>
                <th scope="col">Last firings</th>
                {canManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {schedules.map((schedule) => (
                <tr key={schedule.id} data-schedule={schedule.name}>
                  <td>
                    <strong>{schedule.name}</strong>
                    <div>
                      <span className={`badge ${schedule.state === "active" ? "ok" : "warn"}`}>{schedule.state}</span>
                    </div>
                    <div className="muted">by {schedule.owner === "schedule" ? schedule.createdBy : schedule.owner}</div>
                    {schedule.missed > 0 ? <div className="muted">{schedule.missed} missed (past catch-up)</div> : null}
                  </td>
                  <td>
                    <span className="mono">
                      {schedule.kind}@{schedule.version}
                    </span>
                    {schedule.dueTimeField ? <div className="muted">input.{schedule.dueTimeField} = the due time</div> : null}
                  </td>
                  <td>
                    <span className="mono">{schedule.cron}</span> in {schedule.timeZone}
                    <div className="muted">
                      {overlapWords[schedule.overlap]}; {catchUpWords(schedule)}
                    </div>
                  </td>
                  <td>
                    {schedule.upcoming.length === 0 ? (
                      <span className="muted">paused</span>
                    ) : (
                      <ol aria-label={`Next due times of ${schedule.name}`}>
                        {schedule.upcoming.map((due) => (
                          <li key={due}>
                            <Time value={due} />
                          </li>
                        ))}
                      </ol>
                    )}
                  </td>
                  <td>
                    <Firings schedule={schedule} />
                  </td>
                  {canManage ? (
                    <td>
                      <div className="row">
                        {schedule.state === "active" ? (
                          <button type="button" onClick={() => void change(schedule, "pause")}>
                            Pause {schedule.name}
                          </button>
                        ) : (
                          <button type="button" onClick={() => void change(schedule, "resume")}>
                            Resume {schedule.name}
                          </button>
                        )}
                        <button type="button" onClick={() => void change(schedule, "delete")}>
                          Delete {schedule.name}
                        </button>
                      </div>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
