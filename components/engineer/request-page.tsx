"use client";

/**
 * The request's page: its timeline and, beside it, the selected step's evidence, the request's
 * input and origin, what the customer sees, review cases, webhooks, and the actions (cancel,
 * rerun from a step). Live while the request can change, with /track's polling discipline: the
 * answer's ETag is sent back (an unchanged request costs a 304), the interval backs off while
 * nothing changes, and nothing is polled while the tab is hidden. Every action sends the
 * version the operator saw; a refusal because the request changed says what changed.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { Route } from "next";
import Link from "next/link";
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { toast } from "sonner";
import type { ChildOfRequest, ParentOfRequest } from "@/lib/children/read";
import type { CurrentRequest } from "@/lib/requests/page/errors";
import type { RequestPageData, StepLine, WebhookEventLine } from "@/lib/requests/page/types";
import { Time } from "@/components/ui/time";
import { shortId } from "./api";
import { OUTCOME_WORDS, RequestTimeline, TimelineLegend, fullWindow, waitWords, type Window } from "./request-timeline";
import { StateBadge } from "./state-badge";
import styles from "./request-page.module.css";
import eng from "./engineer.module.css";

const FIRST_POLL_MS = 2_000;
const MAX_POLL_MS = 16_000;

type Polled = { data: RequestPageData; etag: string | null; unchanged: number; fetchedAt: number };

/** One poll: If-None-Match with the ETag held; a 304 keeps the data and counts how long it has not changed. */
async function poll(id: string, previous: Polled | undefined): Promise<Polled> {
  const response = await fetch(`/api/requests/${id}/timeline`, {
    headers: { accept: "application/json", ...(previous?.etag ? { "if-none-match": previous.etag } : {}) },
    cache: "no-store",
  });
  if (response.status === 304 && previous) {
    // Nothing changed but time: a running attempt's bar reaches the database clock of the last
    // full answer plus the time since.
    const now = Date.now();
    const dbNow = new Date(Date.parse(previous.data.dbNow) + (now - previous.fetchedAt)).toISOString();
    return { data: { ...previous.data, dbNow }, etag: previous.etag, unchanged: previous.unchanged + 1, fetchedAt: now };
  }
  if (!response.ok) throw new Error(`the request could not be refreshed (${response.status})`);
  return { data: (await response.json()) as RequestPageData, etag: response.headers.get("etag"), unchanged: 0, fetchedAt: Date.now() };
}

type Problem = { code?: string; detail?: string; why?: string; current?: CurrentRequest };

async function post<T>(url: string, body: unknown): Promise<{ ok: true; value: T } | { ok: false; problem: Problem }> {
  const response = await fetch(url, { method: "POST", headers: { accept: "application/json", "content-type": "application/json" }, body: JSON.stringify(body) });
  const parsed = (await response.json().catch(() => ({}))) as unknown;
  return response.ok ? { ok: true, value: parsed as T } : { ok: false, problem: parsed as Problem };
}

/** What changed between the view the operator acted on and the request now, in words. */
export function changesBetween(seen: RequestPageData, current: CurrentRequest): string[] {
  const changes: string[] = [];
  if (seen.request.status !== current.status) changes.push(`the request is now ${current.status} (was ${seen.request.status})`);
  for (const now of current.steps) {
    const before = seen.steps.find((s) => s.id === now.id);
    if (!before) continue;
    if (before.state !== now.state) changes.push(`step ${now.name} is now ${now.state.replaceAll("_", " ")} (was ${before.state.replaceAll("_", " ")})`);
    else if (before.fencingTerm !== now.fencingTerm) changes.push(`step ${now.name} moved to term ${now.fencingTerm} (was ${before.fencingTerm})`);
  }
  return changes.length > 0 ? changes : ["the request changed"];
}

function Bounded({ label, value, onShowAll }: { label: string; value: { text: string; chars: number; truncated: boolean } | null; onShowAll: () => void }) {
  if (!value) return <p className="muted">None.</p>;
  let pretty = value.text;
  if (!value.truncated) {
    try {
      pretty = JSON.stringify(JSON.parse(value.text), null, 2);
    } catch {
      pretty = value.text;
    }
  }
  return (
    <>
      <pre className={styles.pre} aria-label={label} tabIndex={0}>
        {pretty}
        {value.truncated ? "…" : ""}
      </pre>
      {value.truncated ? (
        <button type="button" onClick={onShowAll}>
          Show all ({value.chars.toLocaleString("en-GB")} characters)
        </button>
      ) : null}
    </>
  );
}

/** Whether a step's last attempt began an invocation with no answer saying the effect is absent: its outcome is unknown (as the rerun reads it). */
const unknownOutcome = (step: StepLine) => {
  const last = step.attempts.at(-1);
  return !!last && last.invocationBeganAt !== null && last.observedEffect !== "absent" && step.receipt === null;
};
const DONE = new Set(["completed", "completed_without_effect"]);

/** What links the request to others: the step that started it, the children its steps started, its trace. */
export type RequestLinks = {
  readonly parent: ParentOfRequest | null;
  readonly children: readonly ChildOfRequest[];
  /** The trace UI's page for this request (FENCELINE_TRACE_URL); null without one. */
  readonly traceUrl: string | null;
};

export function RequestPageView({ initial, canOperate, links }: { initial: RequestPageData; canOperate: boolean; links: RequestLinks }) {
  const id = initial.request.id;
  const queryClient = useQueryClient();
  const key = useMemo(() => ["engineer", "request-page", id] as const, [id]);
  const query = useQuery({
    queryKey: key,
    queryFn: () => poll(id, queryClient.getQueryData<Polled>(key)),
    initialData: () => ({ data: initial, etag: null, unchanged: 0, fetchedAt: Date.now() }),
    refetchInterval: (q) => {
      const held = q.state.data;
      if (!held) return FIRST_POLL_MS;
      // Nothing more happens by itself to a request that ended with nothing running.
      if (held.data.request.status !== "active" && !held.data.steps.some((s) => s.state === "leased")) return false;
      return Math.min(FIRST_POLL_MS * 2 ** held.unchanged, MAX_POLL_MS);
    },
    refetchIntervalInBackground: false,
  });
  const data = query.data.data;
  const live = data.request.status === "active" || data.steps.some((s) => s.state === "leased");
  const [showAll, setShowAll] = useState<RequestPageData | null>(null);
  const full = showAll ?? data;

  const whole = useMemo(() => fullWindow(data), [data]);
  const [window, setWindow] = useState<Window | null>(null);
  const view = window ?? whole;
  const zoom = useCallback(
    (factor: number) =>
      setWindow((w) => {
        const current = w ?? whole;
        const mid = (current.from + current.to) / 2;
        const half = Math.max(((current.to - current.from) / 2) * factor, 5);
        return { from: Math.max(whole.from, mid - half), to: Math.min(whole.to, mid + half) };
      }),
    [whole],
  );
  const pan = useCallback(
    (direction: number) =>
      setWindow((w) => {
        const current = w ?? whole;
        const span = current.to - current.from;
        const shift = span * 0.25 * direction;
        const from = Math.min(Math.max(whole.from, current.from + shift), whole.to - span);
        return { from, to: from + span };
      }),
    [whole],
  );

  const [selectedId, setSelectedId] = useState<string | null>(() => initial.steps.find((s) => !DONE.has(s.state))?.id ?? initial.steps[0]?.id ?? null);
  const selected = data.steps.find((s) => s.id === selectedId) ?? null;
  const selectedFull = full.steps.find((s) => s.id === selectedId) ?? selected;

  const [refusal, setRefusal] = useState<string[] | null>(null);
  const refusalRef = useRef<HTMLDivElement>(null);
  const cancelDialog = useRef<HTMLDialogElement>(null);
  const rerunDialog = useRef<HTMLDialogElement>(null);
  const panelHeading = useRef<HTMLHeadingElement>(null);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);

  const refresh = useCallback(async () => {
    setShowAll(null);
    await queryClient.resetQueries({ queryKey: key });
  }, [queryClient, key]);

  async function act(url: string, body: Record<string, unknown>, dialog: HTMLDialogElement | null, done: (value: never) => string) {
    setBusy(true);
    try {
      const answer = await post<never>(url, { ...body, seenVersion: data.version, reason });
      dialog?.close();
      if (answer.ok) {
        setRefusal(null);
        setReason("");
        toast.success(done(answer.value));
        await refresh();
        panelHeading.current?.focus();
      } else {
        const lines = answer.problem.current ? [answer.problem.why ?? "", ...(answer.problem.code === "stale-request-view" ? changesBetween(data, answer.problem.current) : [])].filter(Boolean) : [];
        setRefusal([answer.problem.detail ?? "refused", ...lines]);
        await refresh();
        requestAnimationFrame(() => refusalRef.current?.focus());
      }
    } finally {
      setBusy(false);
    }
  }

  const canCancel = canOperate && data.request.status === "active";
  const rerunnable = (step: StepLine | null): step is StepLine => {
    if (!canOperate || !step || data.request.status !== "failed" || DONE.has(step.state)) return false;
    const before = data.steps.filter((s) => s.position < step.position);
    return before.every((s) => DONE.has(s.state));
  };
  const rearmed = selected ? data.steps.filter((s) => s.position >= selected.position && !DONE.has(s.state)) : [];
  const toReview = rearmed.filter(unknownOutcome);

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      const target = event.target as HTMLElement | null;
      if (target && (target.closest("input, textarea, select, dialog[open]") || event.metaKey || event.ctrlKey || event.altKey)) return;
      if (event.key === "+" || event.key === "=") zoom(0.5);
      else if (event.key === "-") zoom(2);
      else if (event.key === "0") setWindow(null);
      else if (event.key === "[") pan(-1);
      else if (event.key === "]") pan(1);
      else if (event.key === "j" || event.key === "k") {
        const index = data.steps.findIndex((s) => s.id === selectedId);
        const next = data.steps[Math.max(0, Math.min(data.steps.length - 1, index + (event.key === "j" ? 1 : -1)))];
        if (next) setSelectedId(next.id);
      } else if (event.key === "c" && canCancel) cancelDialog.current?.showModal();
      else if (event.key === "r" && rerunnable(selected)) rerunDialog.current?.showModal();
      else return;
      event.preventDefault();
    }
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  });

  const [webhooks, setWebhooks] = useState<WebhookEventLine[] | null>(null);
  async function loadWebhooks() {
    if (webhooks) return;
    const response = await fetch(`/api/requests/${id}/webhooks`, { headers: { accept: "application/json" } });
    setWebhooks(response.ok ? ((await response.json()) as { items: WebhookEventLine[] }).items : []);
  }
  async function loadAll() {
    const response = await fetch(`/api/requests/${id}/timeline?full=true`, { headers: { accept: "application/json" }, cache: "no-store" });
    if (response.ok) setShowAll((await response.json()) as RequestPageData);
  }

  const attempts = data.steps.reduce((n, s) => n + s.attempts.length, 0);
  return (
    <div className="stack">
      <div className={eng.header}>
        <h1>
          Request <span className="mono">{shortId(id)}</span>
        </h1>
        <span className="mono">
          {data.request.kind}@{data.request.kindVersion}
        </span>
        <StateBadge state={data.request.status} />
        <span className="muted" aria-live="polite">
          {live ? (query.isFetching ? "updating…" : "live") : "ended: not polling"}
        </span>
        <span className={eng.headerEnd}>
          {canCancel ? (
            <button type="button" className={eng.danger} onClick={() => cancelDialog.current?.showModal()} aria-keyshortcuts="c">
              Cancel request…
            </button>
          ) : null}
        </span>
      </div>
      {data.request.statusReason ? <p className="muted">{data.request.statusReason}</p> : null}
      {refusal ? (
        <div role="alert" ref={refusalRef} tabIndex={-1} className="card">
          <strong>Nothing was done.</strong> {refusal[0]}
          {refusal.length > 1 ? (
            <ul className={styles.changes}>
              {refusal.slice(1).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : null}
          <p className="muted">The page now shows the request as it is; look again before acting.</p>
        </div>
      ) : null}
      {query.error ? <p role="status">The latest state could not be loaded; showing the last one. ({query.error.message})</p> : null}

      <div className={styles.layout}>
        <section className="card stack" aria-labelledby="timeline-title">
          <h2 id="timeline-title">
            Timeline <span className="muted">({data.steps.length} steps, {attempts} attempts; database clock)</span>
          </h2>
          <div className={styles.toolbar} role="toolbar" aria-label="Zoom and pan the timeline">
            <button type="button" onClick={() => zoom(0.5)} aria-keyshortcuts="+">Zoom in</button>
            <button type="button" onClick={() => zoom(2)} aria-keyshortcuts="-">Zoom out</button>
            <button type="button" onClick={() => pan(-1)} aria-keyshortcuts="[">Earlier</button>
            <button type="button" onClick={() => pan(1)} aria-keyshortcuts="]">Later</button>
            <button type="button" onClick={() => setWindow(null)} aria-keyshortcuts="0">Whole request</button>
            <output>{((view.to - view.from) / 1000).toFixed(1)} s in view</output>
          </div>
          <RequestTimeline data={data} window={view} selectedId={selectedId} onSelect={setSelectedId} />
          <TimelineLegend />
          <details>
            <summary>Keyboard shortcuts</summary>
            <ul>
              <li><kbd className={styles.kbd}>j</kbd> / <kbd className={styles.kbd}>k</kbd> next / previous step</li>
              <li><kbd className={styles.kbd}>+</kbd> / <kbd className={styles.kbd}>-</kbd> zoom in / out, <kbd className={styles.kbd}>[</kbd> / <kbd className={styles.kbd}>]</kbd> earlier / later, <kbd className={styles.kbd}>0</kbd> whole request</li>
              <li><kbd className={styles.kbd}>c</kbd> cancel the request, <kbd className={styles.kbd}>r</kbd> rerun from the selected step (when allowed)</li>
            </ul>
          </details>
        </section>

        <div className="stack">
          <section className={`card ${styles.panel}`} aria-labelledby="step-title">
            <h2 id="step-title" ref={panelHeading} tabIndex={-1}>
              {selected ? (
                <>
                  Step {selected.name} <StateBadge state={selected.state} />
                </>
              ) : (
                "No step"
              )}
            </h2>
            {selected ? (
              <div className="stack">
                <p>
                  <Link href={`/steps/${selected.id}` as Route}>Lease history and permits of {selected.name}</Link> · {selected.adapter}.{selected.operation} · term {selected.fencingTerm} ·{" "}
                  {selected.attemptsStarted} of {selected.attemptBudget} attempts
                  {selected.stateReason ? <span className="muted"> · {selected.stateReason}</span> : null}
                </p>
                {selected.receipt ? (
                  <p>
                    ✓ Receipt under term {selected.receipt.fencingTerm}, verified by <strong>{selected.receipt.verificationMethod.replaceAll("_", " ")}</strong>
                    {selected.receipt.externalReference ? <> · reference <span className="mono">{selected.receipt.externalReference}</span></> : null}
                  </p>
                ) : (
                  <p className="muted">No receipt.</p>
                )}
                {data.waits
                  .filter((line) => line.stepId === selected.id)
                  .map((line) => (
                    <p key={line.room}>↳ {waitWords(line)}</p>
                  ))}
                <div className={eng.tableWrap}>
                  <table>
                    <caption className="visually-hidden">Attempts of {selected.name}</caption>
                    <thead>
                      <tr>
                        <th scope="col">Term</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">Reached</th>
                        <th scope="col">Started</th>
                      </tr>
                    </thead>
                    <tbody>
                      {selected.attempts.slice(-50).map((a) => (
                        <tr key={a.id}>
                          <td>{a.fencingTerm}</td>
                          <td>
                            {OUTCOME_WORDS[a.outcome ?? "running"]}
                            {a.endReason ? <span className="muted"> (lease {a.endReason})</span> : null}
                            {a.outcomeReason ? <div className="muted">{a.outcomeReason}</div> : null}
                          </td>
                          <td>{a.checkpoint.replaceAll("_", " ")}</td>
                          <td>
                            <Time value={a.startedAt} precise />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                  {selected.attempts.length > 50 ? <p className="muted">The last 50 of {selected.attempts.length} attempts; the step page has them all.</p> : null}
                </div>
                {selected.recoveryDecisions.length > 0 ? (
                  <ul aria-label="Recovery decisions">
                    {selected.recoveryDecisions.map((d) => (
                      <li key={d.id}>
                        ▲ After term {d.fencingTerm} ({d.trigger.replaceAll("_", " ")}): <strong>{d.category.replaceAll("_", " ")}</strong>
                        {d.reason ? ` — ${d.reason}` : ""} <span className="muted">by {d.decidedBy}</span>
                      </li>
                    ))}
                  </ul>
                ) : null}
                {selected.fencingRejections.map((r) => (
                  <p key={`r${r.id}`}>
                    ✕ Refused {r.operation.replaceAll("_", " ")} under term {r.presentedTerm} (current {r.currentTerm ?? "none"}): {r.reason.replaceAll("_", " ")}
                  </p>
                ))}
                {selected.lateObservations.map((o) => (
                  <p key={`o${o.id}`}>
                    ◆ Late observation from term {o.fencingTerm}: {o.operation.replaceAll("_", " ")}
                    {o.externalReference ? `, reference ${o.externalReference}` : ""}
                  </p>
                ))}
                <h3>Result</h3>
                <Bounded label={`Result of ${selected.name}`} value={selectedFull?.result ?? null} onShowAll={loadAll} />
                {rerunnable(selected) ? (
                  <button type="button" className="primary" onClick={() => rerunDialog.current?.showModal()} aria-keyshortcuts="r">
                    Rerun from {selected.name}…
                  </button>
                ) : null}
              </div>
            ) : null}
          </section>

          <section className={`card ${styles.panel}`} aria-labelledby="customer-title">
            <h2 id="customer-title">The customer sees</h2>
            {data.projection ? (
              <>
                <p>
                  <strong>{data.projection.headline.label}</strong> — {data.projection.happening}
                </p>
                <p className="muted">{data.projection.next}</p>
                <Link href={`/track/${data.request.trackingToken}` as Route}>Open their tracking page</Link>
              </>
            ) : (
              <p className="muted">Nothing to show.</p>
            )}
          </section>

          <section className={`card ${styles.panel}`} aria-labelledby="origin-title">
            <h2 id="origin-title">Request</h2>
            <dl className={eng.facts}>
              <div>
                <dt>App</dt>
                <dd className="mono">{data.request.requester}</dd>
              </div>
              <div>
                <dt>Idempotency key</dt>
                <dd className="mono">{data.request.idempotencyKey ?? "none"}</dd>
              </div>
              <div>
                <dt>Created</dt>
                <dd>
                  <Time value={data.request.createdAt} precise />
                </dd>
              </div>
              <div>
                <dt>Deadline</dt>
                <dd>
                  <Time value={data.request.deadlineAt} />
                </dd>
              </div>
              <div>
                <dt>Priority · concurrency key</dt>
                <dd>
                  {data.request.priority} · {data.request.concurrencyKey ?? "none"}
                </dd>
              </div>
            </dl>
            <h3>Input</h3>
            <Bounded label="Input of the request" value={full.request.input} onShowAll={loadAll} />
          </section>

          <section className={`card ${styles.panel}`} aria-labelledby="reviews-title">
            <h2 id="reviews-title">Review cases</h2>
            {data.reviewCases.length === 0 ? (
              <p className="muted">None.</p>
            ) : (
              <ul>
                {data.reviewCases.map((c) => (
                  <li key={c.id}>
                    <Link href={`/review/${c.id}` as Route}>{c.status === "open" ? "Open" : `Resolved (${c.resolution?.replaceAll("_", " ")})`}</Link> — step{" "}
                    {data.steps.find((s) => s.id === c.stepId)?.name}: {c.reason}. Owner: {c.assignee ?? "unassigned"}
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section className={`card ${styles.panel}`} aria-labelledby="children-title" data-section="parent-and-children">
            <h2 id="children-title">Parent and children</h2>
            {links.parent === null && links.children.length === 0 ? <p className="muted">Not started by another request, and starts none.</p> : null}
            {links.parent ? (
              <p>
                Started by step <Link href={`/steps/${links.parent.stepId}` as Route}>{links.parent.step}</Link> of{" "}
                <Link href={`/requests/${links.parent.requestId}` as Route}>
                  {links.parent.kind}@{links.parent.version} {shortId(links.parent.requestId)}
                </Link>{" "}
                (child {links.parent.index + 1} of {links.parent.siblings}; the parent&apos;s wait is {links.parent.waitState})
              </p>
            ) : null}
            {links.children.length > 0 ? (
              <ul data-testid="request-children">
                {links.children.map((child) => (
                  <li key={child.requestId}>
                    {child.step} #{child.index + 1}:{" "}
                    <Link href={`/requests/${child.requestId}` as Route}>
                      {child.kind}@{child.version} {shortId(child.requestId)}
                    </Link>{" "}
                    — {child.status}
                    {child.endedAt ? (
                      <>
                        , ended <Time value={child.endedAt} />
                      </>
                    ) : null}
                  </li>
                ))}
              </ul>
            ) : null}
            {links.traceUrl ? (
              <p>
                <a href={links.traceUrl} target="_blank" rel="noopener noreferrer" data-testid="trace-link">
                  View this request&apos;s trace
                </a>
              </p>
            ) : null}
          </section>

          <details className={`card ${styles.panel}`} onToggle={(e) => (e.currentTarget.open ? void loadWebhooks() : undefined)}>
            <summary>Webhook events and deliveries</summary>
            {webhooks === null ? (
              <p className="muted">Loading…</p>
            ) : webhooks.length === 0 ? (
              <p className="muted">None yet.</p>
            ) : (
              <ul>
                {webhooks.map((e) => (
                  <li key={e.id}>
                    <span className="mono">{e.type}</span> <Time value={e.createdAt} />
                    <ul>
                      {e.deliveries.map((d) => (
                        <li key={d.id}>
                          <Link href={`/webhooks/${d.endpointId}` as Route}>{d.url}</Link>: {d.state}, {d.attempts} tries{d.lastStatus ? `, last ${d.lastStatus}` : ""}
                        </li>
                      ))}
                    </ul>
                  </li>
                ))}
              </ul>
            )}
          </details>
        </div>
      </div>

      <dialog ref={cancelDialog} className={eng.dialog} aria-labelledby="cancel-title">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            void act(`/api/requests/${id}/actions/cancel`, {}, cancelDialog.current, () => "Request cancelled");
          }}
        >
          <h2 id="cancel-title">Cancel this request?</h2>
          <p>Running steps stop at their next checkpoint; steps not started will not run. Whatever the workflow declares to undo runs as it would for any cancel. This is recorded with your reason.</p>
          <label htmlFor="cancel-reason">Reason</label>
          <textarea id="cancel-reason" required minLength={3} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
          <div className={eng.dialogActions}>
            <button type="button" onClick={() => cancelDialog.current?.close()}>
              Keep it
            </button>
            <button type="submit" className={eng.danger} disabled={busy || reason.trim().length < 3}>
              Confirm cancel
            </button>
          </div>
        </form>
      </dialog>

      <dialog ref={rerunDialog} className={eng.dialog} aria-labelledby="rerun-title">
        <form
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            if (!selected) return;
            void act(`/api/requests/${id}/actions/rerun`, { fromStepId: selected.id }, rerunDialog.current, (value: { steps: unknown[]; toReview: unknown[] }) =>
              `Rerun: ${value.steps.length} step(s) rearmed${value.toReview.length ? `, ${value.toReview.length} to review first` : ""}`,
            );
          }}
        >
          <h2 id="rerun-title">Rerun from {selected?.name}?</h2>
          <p>
            {rearmed.map((s) => s.name).join(", ")} get a new budget of 3 attempts each. Steps with a receipt are not run again; earlier attempts and receipts stay.
          </p>
          {toReview.length > 0 ? (
            <p role="note">
              <strong>Review first:</strong> the last attempt of {toReview.map((s) => s.name).join(", ")} began calling its destination with no answer. Unless the destination takes
              idempotency keys or can be queried, it goes to a review case, and nothing runs for it until a person settles it.
            </p>
          ) : null}
          <label htmlFor="rerun-reason">Reason</label>
          <textarea id="rerun-reason" required minLength={3} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
          <div className={eng.dialogActions}>
            <button type="button" onClick={() => rerunDialog.current?.close()}>
              Don’t rerun
            </button>
            <button type="submit" className="primary" disabled={busy || reason.trim().length < 3}>
              Confirm rerun
            </button>
          </div>
        </form>
      </dialog>
    </div>
  );
}
