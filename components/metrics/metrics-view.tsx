"use client";

import { useQuery } from "@tanstack/react-query";
import type { Route } from "next";
import Link from "next/link";
import type { Metrics } from "@/lib/api/contract/engineer/metrics";
import { ErrorState } from "@/components/ui/states";
import { Time } from "@/components/ui/time";
import { POLL_MS, engineerKeys, getJson } from "@/components/engineer/api";
import { MetricPanel } from "./metric-panel";
import { RANGE_PRESETS, rangeQuery, type RangeSelection } from "./range";
import styles from "./metrics.module.css";

/**
 * The families side by side but never together: lease churn (infrastructure health), outcome
 * uncertainty (customer risk), and waits (what requests wait for, and how punctually timers fire). A relative range ("last hour") follows the clock and
 * polls; a fixed from/to range is loaded once.
 */
export function MetricsView({ selection, initial, initialError }: { selection: RangeSelection; initial: Metrics | null; initialError: string | null }) {
  const relative = selection.kind === "preset";
  const key = relative ? `range=${selection.preset}` : `from=${selection.from}&to=${selection.to}&bucket=${selection.bucket}`;
  const { data, error } = useQuery({
    queryKey: engineerKeys.metrics(key),
    queryFn: () => getJson<Metrics>(`/api/metrics?${rangeQuery(selection)}`),
    initialData: initial ?? undefined,
    refetchInterval: relative && !initialError ? POLL_MS * 5 : false,
    enabled: !initialError,
  });

  return (
    <div className="stack">
      <nav aria-label="Time range">
        <ul className={styles.ranges}>
          <li className="muted">Range:</li>
          {RANGE_PRESETS.map((preset) => (
            <li key={preset.id}>
              <Link href={`/metrics?range=${preset.id}` as Route} aria-current={relative && selection.preset === preset.id ? "true" : undefined}>
                {preset.label}
              </Link>
            </li>
          ))}
          {data ? (
            <li className="muted">
              <Time value={data.from} /> → <Time value={data.to} />, buckets of {data.bucket}
            </li>
          ) : null}
        </ul>
      </nav>
      {initialError ? <ErrorState what="metrics" error={new Error(initialError)} /> : error ? <ErrorState what="metrics" error={error} /> : null}
      {data ? (
        <>
          <section className={`${styles.family} ${styles.churn}`} aria-labelledby="family-churn">
            <h2 id="family-churn">Lease churn</h2>
            <p className={`muted ${styles.subtitle}`}>
              Infrastructure health: how often execution authority changes hands. Churn alone is not customer impact — an expiry followed by
              a safe retry costs time, not correctness.
            </p>
            <div className={styles.grid}>
              {data.churn.map((metric) => (
                <MetricPanel key={metric.id} metric={metric} bucketSeconds={data.bucketSeconds} />
              ))}
            </div>
          </section>
          <section className={`${styles.family} ${styles.uncertainty}`} aria-labelledby="family-uncertainty">
            <h2 id="family-uncertainty">Outcome uncertainty</h2>
            <p className={`muted ${styles.subtitle}`}>
              Customer risk: what we do not yet know about effects at destinations, and how long it takes to know.
            </p>
            <div className={styles.grid}>
              {data.uncertainty.map((metric) => (
                <MetricPanel key={metric.id} metric={metric} bucketSeconds={data.bucketSeconds} />
              ))}
            </div>
          </section>
          <section className={`${styles.family} ${styles.waits}`} aria-labelledby="family-waits">
            <h2 id="family-waits">Waits</h2>
            <p className={`muted ${styles.subtitle}`}>
              Steps waiting for a time or an event, holding no lease; the events that arrive for them; and how late timers fire on the
              database clock. Neither churn nor uncertainty: nothing is unknown about a step that waits.
            </p>
            <div className={styles.grid}>
              {data.waits.map((metric) => (
                <MetricPanel key={metric.id} metric={metric} bucketSeconds={data.bucketSeconds} />
              ))}
            </div>
          </section>
        </>
      ) : null}
    </div>
  );
}
