import type { Route } from "next";
import Link from "next/link";
import { Time } from "@/components/ui/time";
import type { Figure, Overview } from "@/lib/overview/read";
import { AutoRefresh } from "./auto-refresh";
import { FindRequest } from "./find-request";
import styles from "./overview.module.css";
import { TrendChart } from "./trend-chart";

/** What the signed-in person's roles let them open; a figure is shown only beside its list. */
export type OverviewSections = { readonly technical: boolean; readonly review: boolean };

function Count({ figure, label, testId }: { figure: Figure; label: string; testId: string }) {
  return (
    <Link href={figure.href as Route} data-testid={testId}>
      <span className={styles.count}>{figure.count}</span> {label}
    </Link>
  );
}

/** The staff "now" screen. Every number links to the filtered list it counts. */
export function OverviewView({ overview, sections }: { overview: Overview; sections: OverviewSections }) {
  return (
    <div className="stack">
      <div className="row">
        <h1 style={{ flex: 1 }}>Now</h1>
        <p className="muted" style={{ margin: 0 }}>
          As of <Time value={overview.at} precise /> (database clock)
        </p>
        <AutoRefresh everyMs={15_000} />
      </div>
      {sections.technical ? <FindRequest /> : null}
      {!sections.technical && !sections.review ? (
        <p className="state">Your roles open no figures here. Admin work is on <Link href="/admin">Admin</Link>.</p>
      ) : null}
      <div className={styles.figures}>
        {sections.technical ? (
          <section className={`card ${styles.figure}`} aria-labelledby="fig-in-flight">
            <h2 id="fig-in-flight">Requests in flight</h2>
            <p style={{ margin: "0 0 0.5rem" }}>
              <Count figure={overview.inFlightTotal} label="active" testId="figure-in-flight" />
            </p>
            <ul aria-label="Active requests by what their customers see">
              {overview.inFlight.map((figure) => (
                <li key={figure.headline}>
                  <Count figure={figure} label={figure.label} testId={`figure-in-flight-${figure.headline}`} />
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        {sections.review ? (
          <section className={`card ${styles.figure}`} aria-labelledby="fig-review">
            <h2 id="fig-review">Review cases</h2>
            <ul>
              <li>
                <Count figure={overview.openReviews} label="open" testId="figure-open-reviews" />
              </li>
              <li>
                <Count figure={overview.overdueReviews} label="overdue (past review-by)" testId="figure-overdue-reviews" />
              </li>
            </ul>
          </section>
        ) : null}
        {sections.technical ? (
          <>
            <section className={`card ${styles.figure}`} aria-labelledby="fig-receipts">
              <h2 id="fig-receipts">Receipts</h2>
              <Count figure={overview.receiptsLastHour} label="in the last hour" testId="figure-receipts" />
            </section>
            <section className={`card ${styles.figure}`} aria-labelledby="fig-workers">
              <h2 id="fig-workers">Workers</h2>
              <Count figure={overview.workersAlive} label="alive (heartbeat within 30 s)" testId="figure-workers" />
            </section>
            <section className={`card ${styles.figure}`} aria-labelledby="fig-blocked">
              <h2 id="fig-blocked">Destinations blocked by an epoch transition</h2>
              {overview.blockedDestinations.length === 0 ? (
                <p className="muted" data-testid="figure-blocked" style={{ margin: 0 }}>
                  None: every fenced destination took the current epoch.
                </p>
              ) : (
                <ul data-testid="figure-blocked">
                  {overview.blockedDestinations.map((block) => (
                    <li key={block.adapter}>
                      <Link href={block.href as Route}>
                        <strong>{block.adapter}</strong>
                      </Link>{" "}
                      at epoch {block.epoch} since <Time value={block.since} />: {block.reason}
                    </li>
                  ))}
                </ul>
              )}
            </section>
            <section className={`card ${styles.figure}`} aria-labelledby="fig-webhooks">
              <h2 id="fig-webhooks">Webhook endpoints failing for an hour</h2>
              {overview.failingEndpoints.length === 0 ? (
                <p className="muted" data-testid="figure-failing-endpoints" style={{ margin: 0 }}>
                  None.
                </p>
              ) : (
                <ul data-testid="figure-failing-endpoints">
                  {overview.failingEndpoints.map((endpoint) => (
                    <li key={endpoint.id}>
                      <Link href={endpoint.href as Route}>{endpoint.url}</Link>, failing since <Time value={endpoint.since} />
                    </li>
                  ))}
                </ul>
              )}
            </section>
          </>
        ) : null}
      </div>
      {sections.technical ? (
        <section className="stack" aria-labelledby="trends">
          <div className="row">
            <h2 id="trends" style={{ flex: 1, margin: 0 }}>
              The last hour
            </h2>
            <Link href={overview.metricsHref as Route}>Every metric</Link>
          </div>
          <p className="muted" style={{ margin: 0 }}>
            Lease churn (authority changing hands) and outcome uncertainty (what we do not yet know about effects) are separate
            families, never summed.
          </p>
          <div className={styles.trends}>
            <TrendChart id="churn" title="Lease churn" trend={overview.churn} />
            <TrendChart id="uncertainty" title="Outcome uncertainty" trend={overview.uncertainty} />
          </div>
        </section>
      ) : null}
    </div>
  );
}
