"use client";

import type { Route } from "next";
import Link from "next/link";
import type { StepPage } from "@/lib/api/contract/engineer/steps";
import { LEASE_EVENT_KINDS, RECOVERY_CATEGORIES, STEP_STATES } from "@/lib/engine/vocabulary";
import { WAITING_FOR } from "@/lib/waits/types";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { engineerKeys, shortId } from "./api";
import { usePolledPage } from "./use-polled-page";
import { FilterForm, type FilterField } from "./filter-form";
import { StateBadge } from "./state-badge";
import { WaitLine } from "./step-wait";
import styles from "./engineer.module.css";

const fields: readonly FilterField[] = [
  { name: "state", label: "State", type: "select", options: STEP_STATES },
  { name: "waitingFor", label: "Waiting for", type: "select", options: WAITING_FOR },
  { name: "adapter", label: "Adapter", type: "text", placeholder: "an adapter name" },
  { name: "workflow", label: "Request id", type: "text" },
  { name: "openReview", label: "Open review", type: "select", options: ["true", "false"] },
  { name: "hasRejection", label: "Fencing rejection", type: "select", options: ["true", "false"] },
  { name: "hasLateObservation", label: "Late observation", type: "select", options: ["true", "false"] },
  { name: "enteredUnknown", label: "Entered unknown", type: "select", options: ["true", "false"] },
  { name: "duplicateReference", label: "Duplicate reference", type: "select", options: ["true", "false"] },
  { name: "receipt", label: "Receipt (written in from/to)", type: "select", options: ["true", "false"] },
  { name: "capability", label: "Decided for capability", type: "select", options: ["safe", "idempotency_protected", "reconcilable", "prohibited"] },
  { name: "leaseEvent", label: "Lease event", type: "select", options: LEASE_EVENT_KINDS },
  { name: "recovery", label: "Recovery decision", type: "select", options: RECOVERY_CATEGORIES },
  { name: "from", label: "Event from", type: "datetime" },
  { name: "to", label: "Event before", type: "datetime" },
];

export function StepsView({ query, values, initial, initialError }: { query: string; values: Record<string, string>; initial: StepPage | null; initialError: string | null }) {
  const result = usePolledPage<StepPage>(engineerKeys.steps(query), `/api/steps?${query}`, values, initial, initialError);
  const withoutCursor = new URLSearchParams(query);
  withoutCursor.delete("cursor");

  return (
    <div className="stack">
      <FilterForm fields={fields} values={values} label="Filter steps" />
      {initialError ? (
        <ErrorState what="steps" error={new Error(initialError)} />
      ) : result.error ? (
        <ErrorState what="steps" error={result.error} />
      ) : !result.data ? null : result.data.items.length === 0 ? (
        <Empty>No step matches these filters.</Empty>
      ) : (
        <div className={styles.tableWrap}>
          <table>
            <caption className="visually-hidden">Steps, most recently changed first</caption>
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">Request</th>
                <th scope="col">Adapter</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Current lease</th>
                <th scope="col">Evidence</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {result.data.items.map((step) => (
                <tr key={step.id}>
                  <td>
                    <Link href={`/steps/${step.id}` as Route}>{step.name}</Link>
                    <div className="muted mono" title={step.id}>
                      {shortId(step.id)}
                    </div>
                  </td>
                  <td>
                    <Link className="mono" href={`/steps?workflow=${step.workflowId}` as Route} title={step.workflowId}>
                      {shortId(step.workflowId)}
                    </Link>{" "}
                    <span className="muted">{step.workflowKind}</span>
                  </td>
                  <td>
                    {step.adapter} <span className="muted">· {step.operation}</span>
                  </td>
                  <td>
                    <StateBadge state={step.state} />
                    {step.wait ? <WaitLine wait={step.wait} /> : null}
                  </td>
                  <td className={styles.numeric}>
                    {step.attemptsStarted}/{step.attemptBudget}
                  </td>
                  <td>
                    {step.currentLease ? (
                      <>
                        term {step.currentLease.fencingTerm} · <span className="mono">{shortId(step.currentLease.ownerSessionId)}</span>
                        <div className="muted">
                          expires <Time value={step.currentLease.expiresAt} />
                        </div>
                      </>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                  <td>
                    {step.openReview ? <span className="badge warn">open review</span> : null}{" "}
                    {step.fencingRejections > 0 ? <span className="badge bad">{step.fencingRejections} rejected writes</span> : null}
                  </td>
                  <td>
                    <Time value={step.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className={styles.pager} aria-label="Pages">
        {values.cursor ? <Link href={`/steps?${withoutCursor.toString()}` as Route}>← First page</Link> : null}
        {result.data?.nextCursor ? (
          <Link href={`/steps?${new URLSearchParams([...withoutCursor, ["cursor", result.data.nextCursor]]).toString()}` as Route}>Next page →</Link>
        ) : null}
      </nav>
    </div>
  );
}
