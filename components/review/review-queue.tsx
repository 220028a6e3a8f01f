/**
 * The review queue table. Rendered on the server: filters are a GET form, so every view of the
 * queue is a URL that can be shared, and "Next page" is a link carrying the keyset cursor.
 */
import type { Route } from "next";
import Link from "next/link";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import type { ReviewCaseSummary } from "@/lib/api/contract/support";
import styles from "./review.module.css";

type Filters = { readonly status: "open" | "resolved"; readonly adapter: string; readonly q: string };


const RESOLUTION_WORDS: Record<NonNullable<ReviewCaseSummary["resolution"]>, string> = {
  confirm_delivered: "Confirmed delivered",
  confirm_not_delivered: "Confirmed not delivered",
  abandon: "Abandoned",
};

function hrefWith(filters: Filters, cursor: string | null): Route {
  const params = new URLSearchParams();
  if (filters.status !== "open") params.set("status", filters.status);
  if (filters.adapter) params.set("adapter", filters.adapter);
  if (filters.q) params.set("q", filters.q);
  if (cursor) params.set("cursor", cursor);
  const query = params.toString();
  return (query ? `/review?${query}` : "/review") as Route;
}

export function ReviewQueue({
  filters,
  page,
  problem,
  cursor,
}: {
  filters: Filters;
  page: { items: readonly ReviewCaseSummary[]; nextCursor: string | null } | null;
  problem: string | null;
  cursor: string | null;
}) {
  const filtered = Boolean(filters.adapter || filters.q || filters.status !== "open");
  return (
    <div className="stack">
      <h1>Review queue</h1>
      <p className="muted">
        Steps whose outcome at an external service is unknown and that nothing can settle automatically: the destination
        neither deduplicates nor answers status questions, or the evidence disagrees. Oldest first.
      </p>

      <form method="get" action="/review" className={styles.filters} aria-label="Filter the queue">
        <div>
          <label htmlFor="filter-status">Status</label>
          <select id="filter-status" name="status" defaultValue={filters.status}>
            <option value="open">Open</option>
            <option value="resolved">Resolved</option>
          </select>
        </div>
        <div>
          <label htmlFor="filter-adapter">Destination (adapter)</label>
          <input id="filter-adapter" name="adapter" type="text" defaultValue={filters.adapter} placeholder="any" />
        </div>
        <div className={styles.grow}>
          <label htmlFor="filter-q">Reason or customer reference</label>
          <input id="filter-q" name="q" type="search" defaultValue={filters.q} placeholder="e.g. integrity conflict, FL-0F3A-9C2E" />
        </div>
        <div className="row">
          <button type="submit" className="primary">
            Apply filters
          </button>
          {filtered && <Link href={"/review" as Route}>Clear filters</Link>}
        </div>
      </form>

      {problem !== null && <ErrorState what="the queue" error={new Error(problem)} />}
      {page !== null && page.items.length === 0 && (
        <Empty>
          {filtered || cursor
            ? "No cases match these filters."
            : "Nothing needs review. A case lands here when a step's outcome is unknown and the destination cannot be asked or safely repeated; each one waits for a person to confirm delivered, confirm not delivered, or abandon."}
        </Empty>
      )}
      {page !== null && page.items.length > 0 && (
        <table aria-describedby="queue-caption">
          <caption id="queue-caption" className="visually-hidden">
            Review cases, oldest first
          </caption>
          <thead>
            <tr>
              <th scope="col" aria-sort="ascending">
                Opened
              </th>
              <th scope="col">Customer reference</th>
              <th scope="col">Step</th>
              <th scope="col">Reason</th>
              <th scope="col">Evidence</th>
              <th scope="col">{filters.status === "open" ? "Review by" : "Resolution"}</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((item) => (
              <tr key={item.id}>
                <td>
                  <Link href={`/review/${item.id}` as Route}>
                    <Time value={item.openedAt} />
                  </Link>
                </td>
                <td className="mono">{item.reference}</td>
                <td>
                  {item.stepName} <span className="muted">via {item.adapter}</span>
                </td>
                <td>{item.reason}</td>
                <td className={styles.evidence}>
                  {item.attemptCount} attempt{item.attemptCount === 1 ? "" : "s"} · {item.lateObservationCount} late observation
                  {item.lateObservationCount === 1 ? "" : "s"} · status lookup {item.statusQuery ? "yes" : "no"}
                </td>
                <td>
                  {item.status === "open" ? (
                    <>
                      {item.overdue && <span className="badge bad">Overdue</span>} <Time value={item.reviewBy} />
                    </>
                  ) : (
                    <>
                      {item.resolution ? RESOLUTION_WORDS[item.resolution] : ""} by {item.resolvedBy} <Time value={item.resolvedAt} />
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label="Pages" className="row">
        {cursor && <Link href={hrefWith(filters, null)}>First page</Link>}
        {page?.nextCursor && (
          <Link href={hrefWith(filters, page.nextCursor)} className="button">
            Next page
          </Link>
        )}
      </nav>
    </div>
  );
}
