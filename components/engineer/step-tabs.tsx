"use client";

import type { Route } from "next";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useRef, useState, type KeyboardEvent } from "react";
import type { AttemptView, StepDetail } from "@/lib/api/contract/engineer/steps";
import { CHECKPOINTS, type Checkpoint } from "@/lib/engine/vocabulary";
import { Empty } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { shortId } from "./api";
import styles from "./engineer.module.css";

const TABS = [
  { id: "attempts", label: "Attempts" },
  { id: "checkpoints", label: "Checkpoints" },
  { id: "receipts", label: "Receipts" },
  { id: "late", label: "Late observations" },
  { id: "recovery", label: "Recovery decisions" },
  { id: "permits", label: "Permits & review" },
] as const;
type TabId = (typeof TABS)[number]["id"];


function Json({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  return <pre className={styles.json}>{JSON.stringify(value, null, 2)}</pre>;
}

function Fact({ term, children }: { term: string; children: React.ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children ?? <span className="muted">—</span>}</dd>
    </div>
  );
}

/** When an attempt reached each checkpoint, where the database recorded a time for it. */
function checkpointTimes(attempt: AttemptView): Record<Checkpoint, { reached: boolean; at: string | null }> {
  const reachedIndex = CHECKPOINTS.indexOf(attempt.checkpoint);
  const reached = (name: Checkpoint) => CHECKPOINTS.indexOf(name) <= reachedIndex;
  return {
    created: { reached: true, at: attempt.createdAt },
    identity_persisted: { reached: reached("identity_persisted"), at: null },
    invocation_began: { reached: reached("invocation_began"), at: attempt.invocationBeganAt },
    response_observed: { reached: reached("response_observed"), at: attempt.responseObservedAt },
    receipt_committed: { reached: reached("receipt_committed"), at: attempt.checkpoint === "receipt_committed" ? attempt.endedAt : null },
  };
}

/** One attempt at a time, picked explicitly (latest by default); attempts are never merged. */
function Attempts({ attempts }: { attempts: readonly AttemptView[] }) {
  const [selected, setSelected] = useState<string | null>(null);
  if (attempts.length === 0) return <Empty>No attempt yet: the step has never been claimed.</Empty>;
  const attempt = attempts.find((a) => a.id === selected) ?? attempts.at(-1)!;
  return (
    <div className="stack">
      <div className={styles.attemptPicker}>
        <label htmlFor="attempt-select" style={{ margin: 0 }}>
          Attempt
        </label>
        <select id="attempt-select" value={attempt.id} onChange={(e) => setSelected(e.target.value)}>
          {attempts.map((a, index) => (
            <option key={a.id} value={a.id}>
              #{index + 1} · term {a.fencingTerm} · {a.mode.replaceAll("_", " ")} · {a.outcome?.replaceAll("_", " ") ?? "running"}
            </option>
          ))}
        </select>
        <span className="muted">
          {attempts.length} attempt{attempts.length === 1 ? "" : "s"}, each under its own lease term
        </span>
      </div>
      <dl className={`card ${styles.facts}`}>
        <Fact term="Attempt id">
          <span className="mono">{attempt.id}</span>
        </Fact>
        <Fact term="Fencing term (epoch)">
          {attempt.fencingTerm} ({attempt.epoch})
        </Fact>
        <Fact term="Holder session">
          <span className="mono">{shortId(attempt.ownerSessionId)}</span>
        </Fact>
        <Fact term="Mode">{attempt.mode.replaceAll("_", " ")}</Fact>
        <Fact term="Checkpoint reached">{attempt.checkpoint.replaceAll("_", " ")}</Fact>
        <Fact term="Outcome">
          {attempt.outcome ? attempt.outcome.replaceAll("_", " ") : <span className="muted">not concluded</span>}
          {attempt.outcomeReason ? <div className="muted">{attempt.outcomeReason}</div> : null}
        </Fact>
        <Fact term="Effect observed">{attempt.observedEffect ?? <span className="muted">not observed</span>}</Fact>
        <Fact term="Request identity">{attempt.requestIdentity ? <span className="mono">{attempt.requestIdentity}</span> : null}</Fact>
        <Fact term="External reference">{attempt.externalReference ? <span className="mono">{attempt.externalReference}</span> : null}</Fact>
        <Fact term="Adapter version">{attempt.adapterVersion}</Fact>
        <Fact term="Started">
          <Time value={attempt.createdAt} precise />
        </Fact>
        <Fact term="Invocation began">
          <Time value={attempt.invocationBeganAt} precise />
        </Fact>
        <Fact term="Response observed">
          <Time value={attempt.responseObservedAt} precise />
        </Fact>
        <Fact term="Ended">
          <Time value={attempt.endedAt} precise />
        </Fact>
        <Fact term="Deadline">
          <Time value={attempt.deadlineAt} precise />
        </Fact>
      </dl>
      <details>
        <summary>Observed result (raw)</summary>
        <Json value={attempt.observedResult} />
      </details>
    </div>
  );
}

function Checkpoints({ attempts }: { attempts: readonly AttemptView[] }) {
  if (attempts.length === 0) return <Empty>No attempt yet, so no checkpoint.</Empty>;
  return (
    <div className={styles.tableWrap}>
      <table>
        <caption className="visually-hidden">Checkpoints reached by each attempt</caption>
        <thead>
          <tr>
            <th scope="col">Attempt (term)</th>
            {CHECKPOINTS.map((c) => (
              <th key={c} scope="col">
                {c.replaceAll("_", " ")}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {attempts.map((attempt, index) => {
            const times = checkpointTimes(attempt);
            return (
              <tr key={attempt.id}>
                <th scope="row">
                  #{index + 1} (term {attempt.fencingTerm})
                </th>
                {CHECKPOINTS.map((c) => (
                  <td key={c} className={times[c].reached ? styles.reached : styles.notReached}>
                    {times[c].reached ? (
                      <>
                        <span aria-hidden="true">● </span>reached
                        {times[c].at ? (
                          <div>
                            <Time value={times[c].at} precise />
                          </div>
                        ) : null}
                      </>
                    ) : (
                      <>
                        <span aria-hidden="true">○ </span>not reached
                      </>
                    )}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Receipts({ detail }: { detail: StepDetail }) {
  if (detail.receipts.length === 0) {
    return <Empty>No receipt. {["completed", "completed_without_effect"].includes(detail.step.state) ? "" : "The step is not complete; a receipt-less invoked step is unknown, not done."}</Empty>;
  }
  const attemptIndex = new Map(detail.attempts.map((a, i) => [a.id, i + 1]));
  return (
    <div className="stack">
      {detail.receipts.map((receipt) => (
        <dl key={receipt.id} className={`card ${styles.facts}`}>
          <Fact term="Receipt id">
            <span className="mono">{receipt.id}</span>
          </Fact>
          <Fact term="Verification">{receipt.verificationMethod.replaceAll("_", " ")}</Fact>
          <Fact term="Matched attempt">{receipt.attemptId ? `#${attemptIndex.get(receipt.attemptId) ?? "?"} (${shortId(receipt.attemptId)})` : null}</Fact>
          <Fact term="Lease term (epoch)">
            {receipt.fencingTerm} ({receipt.epoch})
          </Fact>
          <Fact term="External reference">{receipt.externalReference ? <span className="mono">{receipt.externalReference}</span> : null}</Fact>
          <Fact term="Request identity">{receipt.requestIdentity ? <span className="mono">{receipt.requestIdentity}</span> : null}</Fact>
          <Fact term="Input digest">
            <span className="mono">{receipt.inputDigest.slice(0, 16)}…</span>
          </Fact>
          <Fact term="Committed">
            <Time value={receipt.createdAt} precise />
          </Fact>
          <Fact term="Observed result">
            <Json value={receipt.observedResult} />
          </Fact>
        </dl>
      ))}
    </div>
  );
}

function LateObservations({ detail }: { detail: StepDetail }) {
  if (detail.lateObservations.length === 0) return <Empty>No late observation: no stale holder posted evidence for this step.</Empty>;
  const receiptReference = detail.receipts[0]?.externalReference ?? null;
  return (
    <div className={styles.tableWrap}>
      <table>
        <caption className="visually-hidden">Late observations</caption>
        <thead>
          <tr>
            <th scope="col">Arrived</th>
            <th scope="col">Term</th>
            <th scope="col">Operation</th>
            <th scope="col">External reference</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {detail.lateObservations.map((o) => (
            <tr key={o.id}>
              <td>
                <Time value={o.at} precise />
              </td>
              <td className={styles.numeric}>{o.fencingTerm}</td>
              <td>{o.operation.replaceAll("_", " ")}</td>
              <td>
                {o.externalReference ? <span className="mono">{o.externalReference}</span> : <span className="muted">none</span>}
                {o.externalReference && receiptReference && o.externalReference !== receiptReference ? (
                  <div className="badge bad">differs from the receipt&apos;s reference</div>
                ) : null}
              </td>
              <td>
                <Json value={o.result} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RecoveryDecisions({ detail }: { detail: StepDetail }) {
  if (detail.recoveryDecisions.length === 0) return <Empty>No recovery decision: no lease of this step ended without a receipt.</Empty>;
  return (
    <div className="stack">
      {detail.recoveryDecisions.map((d) => {
        const evidence = (d.evidence ?? {}) as { adapter?: { repetition?: string; name?: string }; checkpoint?: string; decision?: { reason?: string } };
        return (
          <dl key={d.id} className={`card ${styles.facts}`}>
            <Fact term="Decision">
              <span className="badge info">{d.category.replaceAll("_", " ")}</span>
              {evidence.decision?.reason ? <div className="muted">{evidence.decision.reason}</div> : null}
            </Fact>
            <Fact term="Trigger">{d.trigger.replaceAll("_", " ")}</Fact>
            <Fact term="Term (epoch)">
              {d.fencingTerm} ({d.epoch})
            </Fact>
            <Fact term="Checkpoint in evidence">{evidence.checkpoint?.replaceAll("_", " ")}</Fact>
            <Fact term="Adapter capability">
              {evidence.adapter ? `${evidence.adapter.name ?? "?"}: ${evidence.adapter.repetition?.replaceAll("_", " ") ?? "?"}` : null}
            </Fact>
            <Fact term="Lease expired at">
              <Time value={d.observedExpiresAt} precise />
            </Fact>
            <Fact term="Decided">
              <Time value={d.decidedAt} precise />
            </Fact>
            <Fact term="Decided by">
              <span className="mono">{d.decidedBy}</span>
            </Fact>
            <Fact term="Evidence">
              <details>
                <summary>Raw evidence</summary>
                <Json value={d.evidence} />
              </details>
            </Fact>
          </dl>
        );
      })}
    </div>
  );
}

function PermitsAndReview({ detail }: { detail: StepDetail }) {
  return (
    <div className="stack">
      <h3>Adapter permits</h3>
      {detail.permits.length === 0 ? (
        <Empty>No adapter permit was taken for this step.</Empty>
      ) : (
        <div className={styles.tableWrap}>
          <table>
            <thead>
              <tr>
                <th scope="col">Term</th>
                <th scope="col">Adapter · class</th>
                <th scope="col">State</th>
                <th scope="col">Acquired</th>
                <th scope="col">Expires / held until</th>
                <th scope="col">Released</th>
              </tr>
            </thead>
            <tbody>
              {detail.permits.map((p) => (
                <tr key={p.id}>
                  <td className={styles.numeric}>{p.fencingTerm}</td>
                  <td>
                    {p.adapter} · {p.operationClass}
                  </td>
                  <td>
                    {p.state}
                    {p.heldReason ? <div className="muted">{p.heldReason}</div> : null}
                  </td>
                  <td>
                    <Time value={p.acquiredAt} precise />
                  </td>
                  <td>
                    <Time value={p.heldUntil ?? p.expiresAt} precise />
                  </td>
                  <td>
                    <Time value={p.releasedAt} precise />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Review cases</h3>
      {detail.reviewCases.length === 0 ? (
        <Empty>No review case: nothing about this step needed a person.</Empty>
      ) : (
        detail.reviewCases.map((c) => (
          <dl key={c.id} className={`card ${styles.facts}`}>
            <Fact term="Status">
              <span className={`badge ${c.status === "open" ? "warn" : "ok"}`}>{c.status}</span>
            </Fact>
            <Fact term="Reason">{c.reason}</Fact>
            <Fact term="Opened">
              <Time value={c.openedAt} precise />
            </Fact>
            <Fact term="Review by">
              <Time value={c.reviewBy} />
            </Fact>
            <Fact term="Assignee">{c.assignee}</Fact>
            <Fact term="Resolution">{c.resolution ? `${c.resolution.replaceAll("_", " ")} by ${c.resolvedBy ?? "?"}` : null}</Fact>
            <Fact term="Resolved">
              <Time value={c.resolvedAt} precise />
            </Fact>
            <Fact term="Note">{c.resolutionNote}</Fact>
          </dl>
        ))
      )}
    </div>
  );
}

/** Tabs (WAI-ARIA pattern: arrow keys move between tabs, Home/End jump); the open tab is in the URL (?tab=). */
export function StepTabs({ detail }: { detail: StepDetail }) {
  const router = useRouter();
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const requested = searchParams.get("tab");
  const active: TabId = TABS.some((t) => t.id === requested) ? (requested as TabId) : "attempts";
  const refs = useRef<Record<string, HTMLButtonElement | null>>({});

  const counts: Record<TabId, number> = {
    attempts: detail.attempts.length,
    checkpoints: detail.attempts.length,
    receipts: detail.receipts.length,
    late: detail.lateObservations.length,
    recovery: detail.recoveryDecisions.length,
    permits: detail.permits.length + detail.reviewCases.length,
  };

  function select(id: TabId) {
    const next = new URLSearchParams(searchParams.toString());
    next.set("tab", id);
    router.replace(`${pathname}?${next.toString()}` as Route, { scroll: false });
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const index = TABS.findIndex((t) => t.id === active);
    const target =
      event.key === "ArrowRight" ? (index + 1) % TABS.length
      : event.key === "ArrowLeft" ? (index - 1 + TABS.length) % TABS.length
      : event.key === "Home" ? 0
      : event.key === "End" ? TABS.length - 1
      : null;
    if (target === null) return;
    event.preventDefault();
    const tab = TABS[target]!;
    select(tab.id);
    refs.current[tab.id]?.focus();
  }

  return (
    <div className="tabs">
      <div role="tablist" aria-label="Step records" onKeyDown={onKeyDown}>
        {TABS.map((tab) => (
          <button
            key={tab.id}
            ref={(el) => {
              refs.current[tab.id] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${tab.id}`}
            aria-selected={active === tab.id}
            aria-controls={`panel-${tab.id}`}
            tabIndex={active === tab.id ? 0 : -1}
            onClick={() => select(tab.id)}
          >
            {tab.label} <span className="muted">({counts[tab.id]})</span>
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${active}`} aria-labelledby={`tab-${active}`} className={styles.tabPanel} tabIndex={0}>
        {active === "attempts" ? <Attempts attempts={detail.attempts} /> : null}
        {active === "checkpoints" ? <Checkpoints attempts={detail.attempts} /> : null}
        {active === "receipts" ? <Receipts detail={detail} /> : null}
        {active === "late" ? <LateObservations detail={detail} /> : null}
        {active === "recovery" ? <RecoveryDecisions detail={detail} /> : null}
        {active === "permits" ? <PermitsAndReview detail={detail} /> : null}
      </div>
    </div>
  );
}
