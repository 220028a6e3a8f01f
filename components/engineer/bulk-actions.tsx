"use client";

/**
 * Cancel or rerun every request the list's filters match: preview first (how many, and the
 * first of them), then start exactly that many — the server refuses if the filter now matches
 * another number — and follow the background work: done, skipped and why, pending.
 */
import { useEffect, useRef, useState, type FormEvent } from "react";
import type { Route } from "next";
import Link from "next/link";
import type { BulkPreview, BulkProgress } from "@/lib/requests/bulk/bulk";
import { shortId } from "./api";
import styles from "./request-page.module.css";

const FILTER_KEYS = ["status", "kind", "createdFrom", "createdTo", "app", "reason"] as const;
const PROGRESS_POLL_MS = 1_000;

async function call<T>(url: string, body?: unknown): Promise<{ ok: true; value: T } | { ok: false; detail: string }> {
  const response = await fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const parsed = (await response.json().catch(() => ({}))) as { detail?: string };
  return response.ok ? { ok: true, value: parsed as T } : { ok: false, detail: parsed.detail ?? `${response.status}` };
}

export function BulkActions({ values }: { values: Record<string, string> }) {
  const filter = Object.fromEntries(FILTER_KEYS.filter((key) => values[key]).map((key) => [key, values[key]]));
  const filterWords = Object.entries(filter).map(([key, value]) => `${key} ${value}`).join(", ") || "none (every request)";
  const [action, setAction] = useState<"cancel" | "rerun">("cancel");
  const [preview, setPreview] = useState<BulkPreview | null>(null);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [progress, setProgress] = useState<BulkProgress | null>(null);
  const resultRef = useRef<HTMLDivElement>(null);
  const key = JSON.stringify(filter);

  useEffect(() => setPreview(null), [key, action]);
  useEffect(() => {
    if (!progress || progress.state === "finished") return;
    const timer = setTimeout(async () => {
      const next = await call<BulkProgress>(`/api/requests/bulk/${progress.id}`);
      if (next.ok) setProgress(next.value);
    }, PROGRESS_POLL_MS);
    return () => clearTimeout(timer);
  }, [progress]);

  async function onPreview() {
    setError(null);
    const answer = await call<BulkPreview>("/api/requests/bulk/preview", { action, filter });
    if (answer.ok) setPreview(answer.value);
    else setError(answer.detail);
    requestAnimationFrame(() => resultRef.current?.focus());
  }

  async function onStart(event: FormEvent) {
    event.preventDefault();
    if (!preview) return;
    setError(null);
    const answer = await call<BulkProgress>("/api/requests/bulk", { action, filter, expectedCount: preview.count, reason, clientKey: `ui-${crypto.randomUUID()}` });
    if (answer.ok) {
      setProgress(answer.value);
      setPreview(null);
      setReason("");
    } else {
      setError(answer.detail);
      setPreview(null);
    }
    requestAnimationFrame(() => resultRef.current?.focus());
  }

  return (
    <details className="card">
      <summary>Act on every match: cancel or rerun</summary>
      <div className="stack">
        <p className="muted">Filters: {filterWords}. At most 500 requests per action; each is acted on as from its own page (audited; skipped with why where its state does not allow it).</p>
        <div className={styles.toolbar}>
          <label htmlFor="bulk-action">Action</label>
          <select id="bulk-action" value={action} onChange={(e) => setAction(e.target.value as "cancel" | "rerun")}>
            <option value="cancel">Cancel each active request</option>
            <option value="rerun">Rerun each failed request from its first step without a receipt</option>
          </select>
          <button type="button" onClick={onPreview}>
            Preview
          </button>
        </div>
        <div ref={resultRef} tabIndex={-1} aria-live="polite">
          {error ? <p role="alert">Nothing was started: {error}</p> : null}
          {preview ? (
            <form onSubmit={onStart} className="stack">
              <p data-testid="bulk-preview-count">
                <strong>{preview.overLimit ? `More than ${preview.limit}` : preview.count}</strong> request{preview.count === 1 ? "" : "s"} match.
                {preview.overLimit ? " Narrow the filters to act on them." : ""}
              </p>
              {preview.sample.length > 0 ? (
                <ul aria-label="First matches">
                  {preview.sample.map((s) => (
                    <li key={s.id}>
                      <Link href={`/requests/${s.id}` as Route} className="mono">
                        {shortId(s.id)}
                      </Link>{" "}
                      {s.kind} · {s.status}
                      {s.statusReason ? ` · ${s.statusReason}` : ""}
                    </li>
                  ))}
                </ul>
              ) : null}
              {!preview.overLimit && preview.count > 0 ? (
                <>
                  <label htmlFor="bulk-reason">Reason</label>
                  <textarea id="bulk-reason" required minLength={3} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
                  <button type="submit" className="primary" disabled={reason.trim().length < 3}>
                    {action === "cancel" ? "Cancel" : "Rerun"} these {preview.count} requests
                  </button>
                </>
              ) : null}
            </form>
          ) : null}
          {progress ? (
            <div data-testid="bulk-progress">
              <p>
                {progress.action === "cancel" ? "Cancel" : "Rerun"} of {progress.total}: <strong>{progress.done} done</strong>, {progress.skipped} skipped, {progress.pending} pending —{" "}
                {progress.state === "finished" ? "finished" : "running"}
              </p>
              {progress.skippedItems.length > 0 ? (
                <ul aria-label="Skipped, and why">
                  {progress.skippedItems.map((s) => (
                    <li key={s.requestId}>
                      <Link href={`/requests/${s.requestId}` as Route} className="mono">
                        {shortId(s.requestId)}
                      </Link>
                      : {s.why}
                    </li>
                  ))}
                </ul>
              ) : null}
            </div>
          ) : null}
        </div>
      </div>
    </details>
  );
}
