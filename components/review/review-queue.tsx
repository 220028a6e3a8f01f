/**
 * The review queue table. Rendered on the server: filters are a GET form and links, so every
 * view of the queue is a URL that can be shared, and "Next page" is a link carrying the keyset
 * cursor. Overdue cases come first; each row says who holds the case and for how long.
 */
import type { Route } from "next";
import Link from "next/link";
import { Empty, ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import type { ReviewCaseSummary } from "@/lib/api/contract/support";
import { HeldFor } from "./held-for";
import { QueueKeys } from "./queue-keys";
import styles from "./review.module.css";

export type Filters = {
  readonly status: "open" | "resolved";
  readonly adapter: string;
  readonly q: string;
  readonly holder: "" | "mine" | "unassigned";
  readonly overdue: boolean;
};

/** The quick views of the open queue, as the holder and overdue filters they set. */
const VIEWS = [
  { label: "All open", holder: "", overdue: false },
  { label: "Mine", holder: "mine", overdue: false },
  { label: "Unassigned", holder: "unassigned", overdue: false },
  { label: "Overdue", holder: "", overdue: true },
] as const;


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
  if (filters.holder) params.set("holder", filters.holder);
  if (filters.overdue) params.set("overdue", "true");
  if (cursor) params.set("cursor", cursor);
  const query = params.toString();
  return (query ? `/review?${query}` : "/review") as Route;
}

function Holder({ item, viewer }: { item: ReviewCaseSummary; viewer: string }) {
  if (item.assignee === null || item.assignedAt === null) return <span className="muted">Unassigned</span>;
  return (
    <>
      {item.assignee === viewer ? <strong>You</strong> : item.assignee} <span className="muted"><HeldFor since={item.assignedAt} /></span>
    </>
  );
}

export function ReviewQueue({
  filters,
  page,
  problem,
  cursor,
  viewer,
}: {
  filters: Filters;
  page: { items: readonly ReviewCaseSummary[]; nextCursor: string | null } | null;
  problem: string | null;
  cursor: string | null;
  /** The signed-in person as records name them: their cases read "You". */
  viewer: string;
}) {
  const filtered = Boolean(filters.adapter || filters.q || filters.status !== "open" || filters.holder || filters.overdue);
  return (
    <div className="stack">
      <h1>Review queue</h1>
      <p className="muted">
        Steps whose outcome at an external service is unknown and that nothing can settle automatically: the destination
        neither deduplicates nor answers status questions, or the evidence disagrees. Overdue first, then by review-by time.
      </p>

      <nav aria-label="Queue views" className={styles.views}>
        {VIEWS.map((view) => {
          const current = filters.status === "open" && filters.holder === view.holder && filters.overdue === view.overdue;
          return (
            <Link
              key={view.label}
              href={hrefWith({ ...filters, status: "open", holder: view.holder, overdue: view.overdue }, null)}
              aria-current={current ? "page" : undefined}
              className={current ? styles.currentView : undefined}
            >
              {view.label}
            </Link>
          );
        })}
      </nav>

      <form method="get" action="/review" className={styles.filters} aria-label="Filter the queue">
        {filters.holder && <input type="hidden" name="holder" value={filters.holder} />}
        {filters.overdue && <input type="hidden" name="overdue" value="true" />}
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
        <QueueKeys searchId="filter-q">
          <table aria-describedby="queue-caption">
            <caption id="queue-caption" className="visually-hidden">
              Review cases, overdue first, then by review-by time
            </caption>
            <thead>
              <tr>
                <th scope="col">Customer reference</th>
                <th scope="col" aria-sort="ascending">
                  Review by
                </th>
                <th scope="col">Held by</th>
                <th scope="col">Step</th>
                <th scope="col">Reason</th>
                <th scope="col">Evidence</th>
                {filters.status === "resolved" && <th scope="col">Resolution</th>}
              </tr>
            </thead>
            <tbody>
              {page.items.map((item) => (
                <tr key={item.id} className={styles.queueRow}>
                  <td className="mono">
                    <Link href={`/review/${item.id}` as Route} data-case-link="">
                      {item.reference}
                    </Link>
                  </td>
                  <td>
                    {item.overdue && <span className="badge bad">Overdue</span>} <Time value={item.reviewBy} />
                  </td>
                  <td>{item.status === "open" ? <Holder item={item} viewer={viewer} /> : (item.assignee ?? <span className="muted">—</span>)}</td>
                  <td>
                    {item.stepName} <span className="muted">via {item.adapter}</span>
                    {item.undoes ? (
                      <div className="muted" data-testid="review-undoes">
                        undoes {item.undoes.step}
                        {item.undoes.externalReference ? (
                          <>
                            {" "}
                            (<code>{item.undoes.externalReference}</code>)
                          </>
                        ) : null}
                      </div>
                    ) : null}
                  </td>
                  <td>{item.reason}</td>
                  <td className={styles.evidence}>
                    {item.attemptCount} attempt{item.attemptCount === 1 ? "" : "s"} · {item.lateObservationCount} late observation
                    {item.lateObservationCount === 1 ? "" : "s"} · status lookup {item.statusQuery ? "yes" : "no"}
                  </td>
                  {filters.status === "resolved" && (
                    <td>
                      {item.resolution ? RESOLUTION_WORDS[item.resolution] : ""} by {item.resolvedBy} <Time value={item.resolvedAt} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </QueueKeys>
      )}
      <nav aria-label="Pages" className="row">
        {cursor && <Link href={hrefWith(filters, null)}>First page</Link>}
        {page?.nextCursor && (
          <Link href={hrefWith(filters, page.nextCursor)} className="button">
            Next page
          </Link>
        )}
      </nav>

      <section aria-labelledby="shortcuts-heading" className={styles.shortcuts}>
        <h2 id="shortcuts-heading">Keyboard shortcuts</h2>
        <dl>
          <div>
            <dt><kbd>j</kbd></dt>
            <dd>next case</dd>
          </div>
          <div>
            <dt><kbd>k</kbd></dt>
            <dd>previous case</dd>
          </div>
          <div>
            <dt><kbd>Enter</kbd></dt>
            <dd>open the case</dd>
          </div>
          <div>
            <dt><kbd>/</kbd></dt>
            <dd>search by reason or customer reference</dd>
          </div>
        </dl>
      </section>
    </div>
  );
}
