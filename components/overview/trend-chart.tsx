"use client";

import type { Route } from "next";
import Link from "next/link";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { Trend } from "@/lib/overview/read";
import styles from "./overview.module.css";

/** Okabe–Ito, as on /metrics: legible on both themes and with common colour-vision deficiencies. */
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"];

const timeLabel = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });

/** One family's last hour as a small line chart, with each line's total linking to the steps behind it. */
export function TrendChart({ id, title, trend }: { id: "churn" | "uncertainty"; title: string; trend: Trend }) {
  const headingId = `trend-${id}`;
  return (
    <article className={`card ${styles.trend} ${id === "churn" ? styles.churn : styles.uncertainty}`} aria-labelledby={headingId}>
      <h3 id={headingId}>{title}</h3>
      <ul className={styles.totals} aria-label={`${title}, last hour`}>
        {trend.lines.map((line) => (
          <li key={line.id}>
            {line.href ? <Link href={line.href as Route}>{line.title}</Link> : <span>{line.title}</span>}: <strong data-testid={`trend-${line.id}`}>{line.total}</strong>
          </li>
        ))}
      </ul>
      <div className={styles.chart} role="img" aria-label={`Chart of ${title.toLowerCase()} per 5 minutes over the last hour; the totals are listed above`}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={[...trend.points]}>
            <CartesianGrid stroke="currentColor" strokeOpacity={0.2} vertical={false} />
            <XAxis dataKey="at" tickFormatter={timeLabel} stroke="currentColor" tick={{ fill: "currentColor", fontSize: 11 }} minTickGap={24} />
            <YAxis allowDecimals={false} stroke="currentColor" tick={{ fill: "currentColor", fontSize: 11 }} width={32} />
            <Tooltip
              labelFormatter={(v) => new Date(String(v)).toLocaleTimeString()}
              contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
            />
            <Legend />
            {trend.lines.map((line, index) => (
              <Line key={line.id} type="monotone" dataKey={line.id} name={line.title} stroke={PALETTE[index % PALETTE.length]} dot={false} isAnimationActive={false} />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
    </article>
  );
}
