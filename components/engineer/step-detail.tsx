"use client";

import { useQuery } from "@tanstack/react-query";
import type { Route } from "next";
import Link from "next/link";
import type { StepDetail } from "@/lib/api/contract/engineer/steps";
import { ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { POLL_MS, engineerKeys, getJson, shortId } from "./api";
import { LeaseHistory } from "./lease-history";
import { RevokeDialog } from "./revoke-dialog";
import { StateBadge } from "./state-badge";
import { StepNow } from "./step-now";
import { StepTabs } from "./step-tabs";
import { StepWait } from "./step-wait";
import styles from "./engineer.module.css";

/** The adapter's registered contract in a line: recovery decides by these promises. */
function contractWords(contract: StepDetail["step"]["contract"]): string {
  if (contract === null) return "no contract registered: an unknown outcome goes to review";
  const promises = [
    contract.idempotencyKeys ? "deduplicates by idempotency key" : "no idempotency keys",
    contract.statusQuery ? "answers status queries" : "no status queries",
    contract.fenceEnforcement ? "enforces fencing terms" : "ignores fencing terms",
  ];
  return `${promises.join(", ")}; repetition ${contract.repetition.replaceAll("_", " ")}; timeout ${contract.timeoutMs} ms, ${contract.concurrencyLimit} at once`;
}

/** A wait step calls no destination: what settles it instead. */
const WAIT_SETTLED_BY = {
  timer: "no destination is called: the database clock fires the timer",
  event: "no destination is called: an event for its key, or its timeout, settles the wait",
} as const;
/** The built-in adapter of child steps: they call no destination either. */
const CHILDREN_ADAPTER = "fenceline.children";

const TERMINAL = new Set(["completed", "completed_without_effect", "superseded", "cancelled", "rejected", "failed"]);

/** The step's technical record. Polls while anything can still change; stops once the step is terminal. */
export function StepDetailView({ initial }: { initial: StepDetail }) {
  const { data, error } = useQuery({
    queryKey: engineerKeys.step(initial.step.id),
    queryFn: () => getJson<StepDetail>(`/api/steps/${initial.step.id}`),
    initialData: initial,
    refetchInterval: (query) => (query.state.data && TERMINAL.has(query.state.data.step.state) ? false : POLL_MS),
  });
  const detail = data ?? initial;
  const { step, workflow } = detail;
  const openLease = detail.leases.find((l) => l.endedAt === null) ?? null;

  return (
    <div className="stack">
      <div className={styles.header}>
        <h1>
          Step {step.name} <span className="muted mono">{shortId(step.id)}</span>
        </h1>
        <StateBadge state={step.state} />
        <span>
          term <strong>{step.fencingTerm}</strong>
        </span>
        <span className={styles.headerEnd}>
          <RevokeDialog stepId={step.id} term={openLease?.fencingTerm ?? null} />
        </span>
      </div>
      {error ? <ErrorState what="the latest state of this step (showing the last one loaded)" error={error} /> : null}
      <StepNow detail={detail} />
      <dl className={`card ${styles.facts}`}>
        <div>
          <dt>Request</dt>
          <dd>
            <Link className="mono" href={`/requests/${workflow.id}` as Route} title={`${workflow.id}: its timeline and actions`}>
              {shortId(workflow.id)}
            </Link>{" "}
            <span className="mono">
              {workflow.kind}@{workflow.version}
            </span>{" "}
            · <StateBadge state={workflow.status} />
            {workflow.servedBy === 0 ? (
              <>
                {" "}
                <span className="badge warn">
                  no worker serves {workflow.kind}@{workflow.version}
                </span>
              </>
            ) : (
              <span className="muted"> · served by {workflow.servedBy} live worker session{workflow.servedBy === 1 ? "" : "s"}</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Steps of the request</dt>
          <dd>
            {workflow.steps.map((s, index) => (
              <span key={s.id}>
                {index > 0 ? " → " : ""}
                {s.id === step.id ? <strong>{s.name}</strong> : <Link href={`/steps/${s.id}` as Route}>{s.name}</Link>}
              </span>
            ))}
          </dd>
        </div>
        <div>
          <dt>Adapter · operation</dt>
          <dd>
            <span className="mono">
              {step.adapter}@{step.adapterVersion}
            </span>{" "}
            · {step.operation}
          </dd>
        </div>
        <div>
          <dt>What the destination promises</dt>
          <dd data-testid="adapter-contract">{detail.wait
              ? WAIT_SETTLED_BY[detail.wait.room]
              : step.adapter === CHILDREN_ADAPTER
                ? "no destination is called: the ends of the child requests it started settle it"
                : contractWords(step.contract)}</dd>
        </div>
        <div>
          <dt>Step class (lease TTL)</dt>
          <dd>
            {step.stepClass} ({step.leaseTtlMs / 1000} s)
          </dd>
        </div>
        <div>
          <dt>Attempts started / budget</dt>
          <dd>
            {step.attemptsStarted} / {step.attemptBudget}
          </dd>
        </div>
        <div>
          <dt>Next mode · eligible</dt>
          <dd>
            {step.nextMode.replaceAll("_", " ")} · {step.nextEligibleAt === null ? "when its concurrency key has room" : <Time value={step.nextEligibleAt} />}
          </dd>
        </div>
        <div>
          <dt>Priority · concurrency key</dt>
          <dd>
            {step.priority} · {step.concurrencyKey === null ? <span className="muted">none</span> : <span className="mono">{step.concurrencyKey}</span>}
          </dd>
        </div>
        <div>
          <dt>Request identity</dt>
          <dd className="mono">{step.requestIdentity ?? "—"}</dd>
        </div>
        <div>
          <dt>Updated (database clock)</dt>
          <dd>
            <Time value={step.updatedAt} precise />
          </dd>
        </div>
      </dl>

      {detail.undo.undoes || detail.undo.undoneBy ? (
        <section aria-labelledby="undo" data-testid="step-undo">
          <h2 id="undo">Undo</h2>
          {detail.undo.undoes ? (
            <p>
              Undoes <Link href={`/steps/${detail.undo.undoes.stepId}` as Route}>{detail.undo.undoes.step}</Link>, whose receipt{" "}
              <span className="mono">{detail.undo.undoes.receiptId}</span>
              {detail.undo.undoes.externalReference ? (
                <>
                  {" "}
                  (reference <code>{detail.undo.undoes.externalReference}</code>)
                </>
              ) : null}{" "}
              made it due; decided by {detail.undo.undoes.decidedBy}. It runs under its own contract, attempts and receipt.
            </p>
          ) : null}
          {detail.undo.undoneBy ? (
            <p>
              Its effect is undone by <Link href={`/steps/${detail.undo.undoneBy.stepId}` as Route}>{detail.undo.undoneBy.name}</Link> (
              {detail.undo.undoneBy.state}).
            </p>
          ) : null}
        </section>
      ) : null}

      {detail.wait ? (
        <section aria-labelledby="wait">
          <h2 id="wait">Wait</h2>
          <p className="muted">
            A waiting step holds no lease and no permit. A timer fires on the database clock, never early; an event wait takes the oldest
            event received for its name and key.
          </p>
          <StepWait wait={detail.wait} stepId={step.id} />
        </section>
      ) : null}

      <section aria-labelledby="lease-history">
        <h2 id="lease-history">Lease history</h2>
        <p className="muted">
          One row per fencing term. Expired, released and revoked are different facts: an expiry does not mean the worker stopped, and a
          revoke does not cancel anything at the destination.
        </p>
        <LeaseHistory leases={detail.leases} dbNow={detail.dbNow} />
      </section>

      <section aria-labelledby="records">
        <h2 id="records">Records</h2>
        <StepTabs detail={detail} />
      </section>
    </div>
  );
}
