"use client";

import type { Route } from "next";
import Link from "next/link";
import type { RequestPage } from "@/lib/api/contract/engineer/requests";
import { WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import { IN_FLIGHT_HEADLINES } from "@/lib/projection/project";
import { WAITING_FOR } from "@/lib/waits/types";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { engineerKeys, shortId } from "./api";
import { usePolledPage } from "./use-polled-page";
import { BulkActions } from "./bulk-actions";
import { FilterForm, type FilterField } from "./filter-form";
import { StateBadge } from "./state-badge";
import { WaitLine } from "./step-wait";
import styles from "./engineer.module.css";

const fields: readonly FilterField[] = [
  { name: "q", label: "Request id or token prefix", type: "text", placeholder: "e.g. 3f2a…" },
  { name: "status", label: "Status", type: "select", options: WORKFLOW_STATUSES },
  { name: "progress", label: "Customer sees (active only)", type: "select", options: IN_FLIGHT_HEADLINES },
  { name: "waitingFor", label: "A step waiting for", type: "select", options: WAITING_FOR },
  { name: "kind", label: "Kind", type: "text", placeholder: "a workflow kind" },
  { name: "app", label: "App", type: "text", placeholder: "the app that created it" },
  { name: "reason", label: "Error reason contains", type: "text", placeholder: "e.g. HTTP 500" },
  { name: "createdFrom", label: "Created from", type: "datetime" },
  { name: "createdTo", label: "Created before", type: "datetime" },
];

/** Requests, newest first. The first page polls; a later page (a cursor) stays put while read. */
export function RequestsView({
  query,
  values,
  initial,
  initialError,
  canOperate = false,
}: {
  query: string;
  values: Record<string, string>;
  initial: RequestPage | null;
  initialError: string | null;
  canOperate?: boolean;
}) {
  const result = usePolledPage<RequestPage>(engineerKeys.requests(query), `/api/requests?${query}`, values, initial, initialError);
  const withoutCursor = new URLSearchParams(query);
  withoutCursor.delete("cursor");

  return (
    <div className="stack">
      <FilterForm fields={fields} values={values} label="Filter requests" />
      {canOperate ? <BulkActions values={values} /> : null}
      {initialError ? (
        <ErrorState what="requests" error={new Error(initialError)} />
      ) : result.error ? (
        <ErrorState what="requests" error={result.error} />
      ) : !result.data ? null : result.data.items.length === 0 ? (
        <Empty>{query && query !== "limit=50" ? "No request matches these filters." : "No requests yet: create one with POST /api/requests, or start the demo traffic."}</Empty>
      ) : (
        <div className={styles.tableWrap}>
          <table>
            <caption className="visually-hidden">Requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Steps (open each for its lease history)</th>
                <th scope="col">Open reviews</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {result.data.items.map((request) => (
                <tr key={request.id}>
                  <td>
                    <Link className="mono" href={`/requests/${request.id}` as Route} title={`${request.id}: its timeline and actions`}>
                      {shortId(request.id)}
                    </Link>
                    <div className="muted mono" title="Tracking token (prefix)">
                      {request.trackingToken.slice(0, 8)}…
                    </div>
                  </td>
                  <td>
                    <span className="mono">
                      {request.kind}@{request.version}
                    </span>
                    {request.servedBy === 0 && request.status === "active" ? (
                      <div>
                        <span className="badge warn">no worker serves {request.kind}@{request.version}</span>
                      </div>
                    ) : null}
                  </td>
                  <td>
                    <StateBadge state={request.status} />
                    {request.statusReason ? <div className="muted">{request.statusReason}</div> : null}
                  </td>
                  <td>
                    <ul className={styles.stepChips} aria-label={`Steps of request ${shortId(request.id)}`}>
                      {request.steps.map((step) => (
                        <li key={step.id}>
                          <Link href={`/steps/${step.id}` as Route}>
                            {step.name} <StateBadge state={step.state} />
                            {step.fencingTerm > 1 ? <span className="muted"> term {step.fencingTerm}</span> : null}
                          </Link>
                          {step.wait ? <WaitLine wait={step.wait} /> : null}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td className={styles.numeric}>{request.openReviews > 0 ? <span className="badge warn">{request.openReviews}</span> : 0}</td>
                  <td>
                    <Time value={request.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className={styles.pager} aria-label="Pages">
        {values.cursor ? <Link href={`/requests?${withoutCursor.toString()}` as Route}>← First page</Link> : null}
        {result.data?.nextCursor ? (
          <Link href={`/requests?${new URLSearchParams([...withoutCursor, ["cursor", result.data.nextCursor]]).toString()}` as Route}>Next page →</Link>
        ) : null}
      </nav>
    </div>
  );
}
