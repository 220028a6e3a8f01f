"use client";

import type { Route } from "next";
import Link from "next/link";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { MetricSeries } from "@/lib/api/contract/engineer/metrics";
import styles from "./metrics.module.css";

/**
 * Series colours (Okabe–Ito): distinguishable with common colour-vision deficiencies and legible
 * on both themes. Kept apart from the state colours (ok/warn/bad), which mean something else.
 */
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#8F7F00", "#999999"];

const label = (key: string) => key.replaceAll("_", " ");
/** Levels: their total is the level now, not a sum over the range. */
const LEVELS = new Set(["open_review_cases", "waiting_steps"]);
/** Series that count one thing more than once (an event received and consumed): lines, never stacked into one sum. */
const OVERLAPPING = new Set(["events"]);
const timeLabel = (iso: string, bucketSeconds: number) => {
  const date = new Date(iso);
  return bucketSeconds >= 86_400
    ? date.toLocaleDateString(undefined, { month: "short", day: "2-digit" })
    : date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
};
const format = (value: number | null | undefined, unit: string) =>
  value === null || value === undefined ? "—" : unit === "seconds" ? `${value.toFixed(value < 10 ? 2 : 0)} s` : String(Math.round(value * 100) / 100);

/** One metric: title, unit, definition, totals, a chart, the same numbers as a table, and the list behind it. */
export function MetricPanel({ metric, bucketSeconds }: { metric: MetricSeries; bucketSeconds: number }) {
  const data = metric.points.map((point) => ({ at: point.at, ...point.values }));
  // Categories (several counts per bucket) stack as bars; a single count or a statistic is a line.
  const stacked = metric.unit !== "seconds" && metric.keys.length > 1 && !OVERLAPPING.has(metric.id);
  const shownKeys = stacked ? metric.keys.filter((key) => (metric.total[key] ?? 0) !== 0) : metric.keys;
  const keys = shownKeys.length > 0 ? shownKeys : metric.keys.slice(0, 1);
  const nonEmptyRows = data.filter((row) => keys.some((key) => (row as Record<string, unknown>)[key] !== null && (row as Record<string, unknown>)[key] !== 0));
  const totalLabel = LEVELS.has(metric.id) ? "now" : metric.unit === "seconds" ? "over the range" : "in range";
  const headingId = `metric-${metric.id}`;

  const axes = (
    <>
      <CartesianGrid stroke="currentColor" strokeOpacity={0.2} vertical={false} />
      <XAxis dataKey="at" tickFormatter={(v: string) => timeLabel(v, bucketSeconds)} stroke="currentColor" tick={{ fill: "currentColor", fontSize: 11 }} minTickGap={24} />
      <YAxis allowDecimals={metric.unit === "seconds"} stroke="currentColor" tick={{ fill: "currentColor", fontSize: 11 }} width={40} />
      <Tooltip
        labelFormatter={(v) => new Date(String(v)).toLocaleString()}
        formatter={(value, name) => [format(typeof value === "number" ? value : null, metric.unit), label(String(name))]}
        contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
      />
      {keys.length > 1 ? <Legend formatter={(value: string) => label(value)} /> : null}
    </>
  );

  return (
    <article className={`card ${styles.panel}`} aria-labelledby={headingId}>
      <h3 id={headingId}>
        {metric.title} <span className="muted">({metric.unit})</span>
      </h3>
      <p className={styles.definition}>{metric.definition}</p>
      <ul className={styles.totals} aria-label={`${metric.title}, ${totalLabel}`}>
        {metric.keys
          .filter((key) => metric.keys.length <= 4 || (metric.total[key] ?? 0) !== 0)
          .map((key) => (
            <li key={key}>
              {metric.keys.length > 1 ? (
                metric.keyHrefs[key] ? (
                  <Link href={metric.keyHrefs[key] as Route}>{label(key)}</Link>
                ) : (
                  <span className="muted">{label(key)}</span>
                )
              ) : null}
              {metric.keys.length > 1 ? <span className="muted">: </span> : null}
              <strong>{format(metric.total[key], metric.unit)}</strong>
            </li>
          ))}
        <li className="muted">{totalLabel}</li>
      </ul>
      <div className={styles.chart} role="img" aria-label={`Chart of ${metric.title} per bucket; the same numbers are in the table below`}>
        <ResponsiveContainer width="100%" height="100%">
          {stacked ? (
            <BarChart data={data}>
              {axes}
              {keys.map((key) => (
                <Bar key={key} dataKey={key} stackId="a" fill={PALETTE[metric.keys.indexOf(key) % PALETTE.length]} isAnimationActive={false} />
              ))}
            </BarChart>
          ) : (
            <LineChart data={data}>
              {axes}
              {keys.map((key) => (
                <Line key={key} type="monotone" dataKey={key} stroke={PALETTE[metric.keys.indexOf(key) % PALETTE.length]} strokeWidth={2} dot={metric.unit === "seconds" ? { r: 3 } : false} connectNulls isAnimationActive={false} />
              ))}
            </LineChart>
          )}
        </ResponsiveContainer>
      </div>
      <details>
        <summary>View as table ({nonEmptyRows.length} of {data.length} buckets with data)</summary>
        <div className={styles.tableScroll}>
          <table>
            <caption className="visually-hidden">{metric.title} per bucket</caption>
            <thead>
              <tr>
                <th scope="col">Bucket start</th>
                {metric.keys.map((key) => (
                  <th key={key} scope="col">
                    {label(key)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {(nonEmptyRows.length > 0 ? nonEmptyRows : []).map((row) => (
                <tr key={row.at}>
                  <th scope="row">
                    <time dateTime={row.at}>{new Date(row.at).toLocaleString()}</time>
                  </th>
                  {metric.keys.map((key) => (
                    <td key={key}>{format((row as unknown as Record<string, number | null>)[key], metric.unit)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          {nonEmptyRows.length === 0 ? <p className="muted">No events in this range.</p> : null}
        </div>
      </details>
      {metric.listHref ? (
        <p>
          <Link href={metric.listHref as Route}>Show the steps behind this metric →</Link>
        </p>
      ) : Object.keys(metric.keyHrefs).length > 0 ? (
        <p className="muted">Each series name above links to the steps behind it.</p>
      ) : null}
    </article>
  );
}
