"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Route } from "next";
import Link from "next/link";
import { toast } from "sonner";
import type { LabAction } from "@/lib/api/contract/engineer/lab";
import type { Workers, WorkerSessionView } from "@/lib/api/contract/engineer/workers";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { POLL_MS, engineerKeys, getJson, sendJson, shortId } from "./api";
import { FaultLab } from "./fault-lab";
import styles from "./engineer.module.css";

/** A heartbeat older than this many intervals (2 s each) reads as stale: liveness only, never an outcome. */
const STALE_HEARTBEAT_MS = 6_000;

function Liveness({ session }: { session: WorkerSessionView }) {
  if (session.stoppedAt) return <span className="badge">■ stopped</span>;
  if (session.heartbeatAgeMs > STALE_HEARTBEAT_MS) return <span className="badge warn">⚠ heartbeat stale ({Math.round(session.heartbeatAgeMs / 1000)} s)</span>;
  return <span className="badge ok">● live</span>;
}

function LabButtons({ session }: { session: WorkerSessionView }) {
  const queryClient = useQueryClient();
  const signal = useMutation({
    mutationFn: (action: LabAction) => sendJson<{ signal: string; pid: number }>(`/api/lab/workers/${session.id}/${action}`, "POST"),
    onSuccess: (result, action) => toast.success(`${action}: sent ${result.signal} to pid ${result.pid}`),
    onError: (error, action) => toast.error(`Could not ${action} worker ${shortId(session.id)}: ${error instanceof Error ? error.message : String(error)}`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: engineerKeys.workers() }),
  });
  if (session.stoppedAt) return <span className="muted">stopped</span>;
  if (!session.onThisHost) return <span className="muted">on another host</span>;
  const name = `worker ${shortId(session.id)} (pid ${session.pid})`;
  return (
    <div className={styles.actions}>
      <button type="button" disabled={signal.isPending} onClick={() => signal.mutate("pause")} aria-label={`Pause ${name}`}>
        Pause
      </button>
      <button type="button" disabled={signal.isPending} onClick={() => signal.mutate("resume")} aria-label={`Resume ${name}`}>
        Resume
      </button>
      <button
        type="button"
        className={styles.danger}
        disabled={signal.isPending}
        aria-label={`Kill ${name}`}
        onClick={() => {
          if (window.confirm(`Kill ${name} with SIGKILL? Its leases will expire and recovery will decide from the evidence.`)) signal.mutate("kill");
        }}
      >
        Kill
      </button>
    </div>
  );
}

export function WorkersView({ initial }: { initial: Workers }) {
  const { data, error } = useQuery({
    queryKey: engineerKeys.workers(),
    queryFn: () => getJson<Workers>("/api/workers"),
    initialData: initial,
    refetchInterval: POLL_MS,
  });
  const workers = data ?? initial;

  return (
    <div className="stack">
      {error ? <ErrorState what="the latest worker sessions (showing the last ones loaded)" error={error} /> : null}
      <section aria-labelledby="sessions">
        <h2 id="sessions">Sessions</h2>
        <p className="muted">
          A session is one process start. Its heartbeat says only that the process was alive; it is never evidence of what a destination
          did. Times are the database clock (now <Time value={workers.dbNow} precise />
          ).
        </p>
        {workers.sessions.length === 0 ? (
          <Empty>No worker session has registered yet. Start workers with npm start or npm run worker.</Empty>
        ) : (
          <div className={styles.tableWrap}>
            <table>
              <caption className="visually-hidden">Worker sessions, live first</caption>
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Host · pid</th>
                  <th scope="col">Transport</th>
                  <th scope="col">Liveness</th>
                  <th scope="col">Last heartbeat</th>
                  <th scope="col">Started</th>
                  <th scope="col">Leases held now</th>
                  {workers.lab ? <th scope="col">Fault lab</th> : null}
                </tr>
              </thead>
              <tbody>
                {workers.sessions.map((session) => (
                  <tr key={session.id} data-session={session.id} data-stopped={session.stoppedAt === null ? undefined : "true"}>
                    <td className="mono" title={session.id}>
                      {shortId(session.id)}
                    </td>
                    <td>
                      {session.host} · {session.pid}
                    </td>
                    <td>{session.transport}</td>
                    <td>
                      <Liveness session={session} />
                      {session.stopReason ? <div className="muted">{session.stopReason}</div> : null}
                    </td>
                    <td>
                      <Time value={session.lastHeartbeatAt} precise />
                    </td>
                    <td>
                      <Time value={session.startedAt} />
                    </td>
                    <td>
                      {session.leases.length === 0 ? (
                        <span className="muted">none</span>
                      ) : (
                        <ul className={styles.stepChips}>
                          {session.leases.map((lease) => (
                            <li key={lease.stepId}>
                              <Link href={`/steps/${lease.stepId}` as Route}>
                                {lease.stepName} · term {lease.fencingTerm}
                              </Link>
                              {lease.expired ? <span className="badge warn"> past expiry</span> : null}
                            </li>
                          ))}
                        </ul>
                      )}
                    </td>
                    {workers.lab ? (
                      <td>
                        <LabButtons session={session} />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {workers.lab ? <FaultLab /> : <p className="muted">The fault lab (pause, resume or kill workers; destination faults) exists in demo mode only.</p>}
    </div>
  );
}
