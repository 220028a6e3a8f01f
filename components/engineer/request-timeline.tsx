"use client";

/**
 * The request's timeline on the database clock: one row per step, each attempt a bar under its
 * fencing term coloured by outcome (with the word in its label, never colour alone), checkpoints
 * as ticks, fencing rejections (✕), late observations (◆), recovery decisions (▲) and the
 * receipt (✓) as marks. Under a step, a row per wait it armed (a timer, an event, its children), in
 * its room's words: what for and until when, and how it ended. Zoom and pan move a window over [created, now]; only what falls in the
 * window is drawn, so a request of thousands of attempts stays a few hundred elements.
 */
import { Fragment, memo } from "react";
import type { AttemptBar, RequestPageData, StepLine } from "@/lib/requests/page/types";
import type { WaitLine } from "@/lib/waits/types";
import styles from "./request-page.module.css";

export type Window = { readonly from: number; readonly to: number };

const TONE: Record<string, string> = {
  effect: styles.ok!,
  no_action_needed: styles.ok!,
  skip: styles.plain!,
  released: styles.plain!,
  waiting: styles.info!,
  failed: styles.bad!,
  lease_lost: styles.warn!,
};

export const OUTCOME_WORDS: Record<string, string> = {
  effect: "effect",
  no_action_needed: "no action needed",
  skip: "skipped",
  released: "released",
  waiting: "waiting",
  failed: "failed",
  lease_lost: "lease lost",
  running: "running",
};

/** The whole span of a request: its creation to the latest thing recorded, or now while it runs. */
export function fullWindow(data: RequestPageData): Window {
  const from = Date.parse(data.request.createdAt);
  let to = data.request.status === "active" ? Date.parse(data.dbNow) : from;
  for (const step of data.steps) {
    for (const a of step.attempts) to = Math.max(to, Date.parse(a.endedAt ?? data.dbNow));
    if (step.receipt) to = Math.max(to, Date.parse(step.receipt.at));
    for (const d of step.recoveryDecisions) to = Math.max(to, Date.parse(d.decidedAt));
    for (const o of step.lateObservations) to = Math.max(to, Date.parse(o.at));
  }
  for (const w of data.waits) to = Math.max(to, Date.parse(w.endedAt ?? data.dbNow));
  return { from, to: Math.max(to, from + 1_000) };
}

const pct = (t: number, w: Window) => ((t - w.from) / (w.to - w.from)) * 100;
const inside = (start: number, end: number, w: Window) => end >= w.from && start <= w.to;
const clamp = (value: number) => Math.max(0, Math.min(100, value));

function attemptLabel(step: StepLine, a: AttemptBar): string {
  const outcome = OUTCOME_WORDS[a.outcome ?? "running"];
  const end = a.endReason ? `, lease ended: ${a.endReason}` : "";
  return `${step.name}, term ${a.fencingTerm} (epoch ${a.epoch}): ${outcome}${end}; reached ${a.checkpoint.replaceAll("_", " ")}`;
}

const Row = memo(function Row({ step, window, now, selected, onSelect }: { step: StepLine; window: Window; now: number; selected: boolean; onSelect: (id: string) => void }) {
  const bars = step.attempts.filter((a) => inside(Date.parse(a.startedAt), a.endedAt ? Date.parse(a.endedAt) : now, window));
  const marks: { key: string; at: number; symbol: string; className: string; label: string }[] = [];
  for (const r of step.fencingRejections) marks.push({ key: `r${r.id}`, at: Date.parse(r.at), symbol: "✕", className: styles.markBad!, label: `fencing rejection: ${r.operation} under term ${r.presentedTerm} (current ${r.currentTerm ?? "none"}, ${r.reason})` });
  for (const o of step.lateObservations) marks.push({ key: `o${o.id}`, at: Date.parse(o.at), symbol: "◆", className: styles.markWarn!, label: `late observation from term ${o.fencingTerm}: ${o.operation}${o.externalReference ? `, reference ${o.externalReference}` : ""}` });
  for (const d of step.recoveryDecisions) marks.push({ key: `d${d.id}`, at: Date.parse(d.decidedAt), symbol: "▲", className: "", label: `recovery decision after term ${d.fencingTerm}: ${d.category.replaceAll("_", " ")}${d.reason ? ` (${d.reason})` : ""}` });
  if (step.receipt) marks.push({ key: "receipt", at: Date.parse(step.receipt.at), symbol: "✓", className: "", label: `receipt under term ${step.receipt.fencingTerm}, verified by ${step.receipt.verificationMethod.replaceAll("_", " ")}` });
  const shown = marks.filter((m) => m.at >= window.from && m.at <= window.to);

  return (
    <li className={`${styles.row} ${selected ? styles.rowSelected : ""}`} data-step={step.name}>
      <button type="button" className={styles.label} aria-pressed={selected} onClick={() => onSelect(step.id)} title={`${step.name}: ${step.state}`}>
        {step.name} <span className="muted">· {step.state.replaceAll("_", " ")}</span>
      </button>
      <div className={styles.track} role="img" aria-label={`${step.name}: ${step.attempts.length} attempts${step.attempts.length > bars.length ? ` (${bars.length} in view)` : ""}, ${step.fencingRejections.length} fencing rejections, ${step.lateObservations.length} late observations, ${step.recoveryDecisions.length} recovery decisions${step.receipt ? ", receipted" : ""}`}>
        {bars.map((a) => {
          const start = Date.parse(a.startedAt);
          const end = a.endedAt ? Date.parse(a.endedAt) : now;
          const left = clamp(pct(start, window));
          const width = Math.max(clamp(pct(end, window)) - left, 0.2);
          const ticks = [a.invocationBeganAt, a.responseObservedAt].filter((t): t is string => t !== null).map(Date.parse).filter((t) => t >= window.from && t <= window.to);
          return (
            <span key={a.id}>
              <span
                className={`${styles.bar} ${TONE[a.outcome ?? ""] ?? styles.info} ${a.endedAt ? "" : styles.running}`}
                style={{ left: `${left}%`, width: `${width}%` }}
                title={attemptLabel(step, a)}
                data-term={a.fencingTerm}
                data-outcome={a.outcome ?? "running"}
              >
                t{a.fencingTerm}
              </span>
              {ticks.map((t) => (
                <span key={t} className={styles.tick} style={{ left: `${clamp(pct(t, window))}%` }} />
              ))}
            </span>
          );
        })}
        {shown.map((m) => (
          <span key={m.key} className={`${styles.mark} ${m.className}`} style={{ left: `${clamp(pct(m.at, window))}%` }} title={m.label} data-mark={m.key[0]}>
            {m.symbol}
          </span>
        ))}
      </div>
    </li>
  );
});

const clockOf = (iso: string) => `${iso.slice(11, 23)} UTC`;

/** A wait in words: "started waiting at 08:59:58.120 UTC for a timer until 3 December at 09:00 UTC; fired at 09:00:00.410 UTC". */
export function waitWords(line: WaitLine): string {
  const began = `started waiting at ${clockOf(line.startedAt)} for ${line.waitingFor}`;
  return line.ending && line.endedAt ? `${began}; ${line.ending} at ${clockOf(line.endedAt)}` : `${began}; still waiting`;
}

const WaitRow = memo(function WaitRow({ line, step, window, now }: { line: WaitLine; step: StepLine; window: Window; now: number }) {
  const start = Date.parse(line.startedAt);
  const end = line.endedAt ? Date.parse(line.endedAt) : now;
  const left = clamp(pct(start, window));
  const words = waitWords(line);
  return (
    <li className={styles.row} data-wait={line.room} data-wait-of={step.name} data-ended={line.ending ? "true" : "false"}>
      <span className={`${styles.label} ${styles.waitLabel}`} title={`${step.name}: ${words}`}>
        ↳ {step.name} waits
      </span>
      <div className={styles.track} aria-hidden="true">
        {inside(start, end, window) ? (
          <span className={`${styles.bar} ${line.ending ? styles.plain : `${styles.info} ${styles.running}`}`} style={{ left: `${left}%`, width: `${Math.max(clamp(pct(end, window)) - left, 0.2)}%` }} title={words}>
            {line.room}
          </span>
        ) : null}
      </div>
      <p className={styles.waitWords}>{words}</p>
    </li>
  );
});

export function RequestTimeline({ data, window, selectedId, onSelect }: { data: RequestPageData; window: Window; selectedId: string | null; onSelect: (id: string) => void }) {
  const now = Date.parse(data.dbNow);
  const seconds = (window.to - window.from) / 1000;
  const at = (fraction: number) => new Date(window.from + (window.to - window.from) * fraction).toISOString().slice(11, 23);
  return (
    <div>
      <div className={styles.axis} aria-hidden="true">
        <span>{at(0)}</span>
        <span>{at(0.5)}</span>
        <span>{at(1)} UTC</span>
      </div>
      <ol className={styles.rows} aria-label={`Steps on the database clock, ${seconds.toFixed(1)} s in view`}>
        {data.steps.map((step) => (
          <Fragment key={step.id}>
            <Row step={step} window={window} now={now} selected={step.id === selectedId} onSelect={onSelect} />
            {data.waits
              .filter((line) => line.stepId === step.id)
              .map((line) => (
                <WaitRow key={`${line.room}:${line.stepId}`} line={line} step={step} window={window} now={now} />
              ))}
          </Fragment>
        ))}
      </ol>
    </div>
  );
}

export function TimelineLegend() {
  const swatches: [string, string][] = [
    [styles.ok!, "effect / no action needed"],
    [styles.warn!, "lease lost"],
    [styles.bad!, "failed"],
    [`${styles.info} ${styles.running}`, "running / waiting"],
    [styles.plain!, "released / skipped"],
  ];
  return (
    <ul className={styles.legend} aria-label="Legend">
      {swatches.map(([className, words]) => (
        <li key={words}>
          <span className={`${styles.swatch} ${className}`} aria-hidden="true" />
          {words}
        </li>
      ))}
      <li>t<i>n</i>: fencing term</li>
      <li>| checkpoint (invocation began, response observed)</li>
      <li>✕ fencing rejection</li>
      <li>◆ late observation</li>
      <li>▲ recovery decision</li>
      <li>✓ receipt</li>
      <li>↳ a wait (timer, event, children): striped while it waits</li>
    </ul>
  );
}
