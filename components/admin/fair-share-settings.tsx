"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { KindFairShare } from "@/lib/fair-share/settings";
import { call, type CallResult } from "./call";

const ruleWords = { "round-robin": "keys take turns", "oldest-first": "oldest first" } as const;

/** /admin's fair-share section: each kind's limit per key and rule, as declared and as overridden; override or clear (audited). */
export function FairShareSettings({ kinds }: { kinds: KindFairShare[] }) {
  const router = useRouter();
  const [message, setMessage] = useState<string | null>(null);

  const after = (result: CallResult, done: string) => {
    setMessage(result.ok ? done : `Refused: ${result.detail}`);
    if (result.ok) router.refresh();
  };

  async function override(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const kind = String(form.get("kind"));
    const limit = String(form.get("limit") ?? "").trim();
    const result = await call("PUT", `/api/admin/fair-share/${encodeURIComponent(kind)}`, {
      limitPerKey: limit === "" ? null : Number(limit),
      fairness: form.get("fairness"),
      reason: form.get("reason"),
    });
    after(result, `Fair share of ${kind} overridden.`);
  }

  async function clear(kind: string) {
    const reason = window.prompt(`Why does ${kind} go back to its declared fair share?`);
    if (!reason) return;
    after(await call("DELETE", `/api/admin/fair-share/${encodeURIComponent(kind)}`, { reason }), `Override of ${kind} removed: its declaration applies.`);
  }

  return (
    <section className="stack" aria-labelledby="fair-share-heading">
      <h2 id="fair-share-heading">Fair share per workflow kind</h2>
      <p className="muted">
        A kind declares how many steps of one concurrency key may be in flight and how keys share the workers. An override replaces both
        until it is removed; a raised limit lets waiting steps in within a second, a lowered one takes effect as steps end.
      </p>
      {message && <p role="status">{message}</p>}
      {kinds.length === 0 ? (
        <p className="muted">No workflow kind is registered yet.</p>
      ) : (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Declared</th>
                <th scope="col">In force</th>
                <th scope="col">Override</th>
              </tr>
            </thead>
            <tbody>
              {kinds.map((kind) => (
                <tr key={kind.kind}>
                  <td>{kind.kind}</td>
                  <td>
                    limit {kind.declared.limitPerKey ?? "none"}, {ruleWords[kind.declared.fairness]} (version {kind.declared.version})
                  </td>
                  <td>
                    limit {kind.effective.limitPerKey ?? "none"}, {ruleWords[kind.effective.fairness]}
                  </td>
                  <td>
                    {kind.override ? (
                      <div className="row">
                        <span>
                          by {kind.override.setBy}: {kind.override.reason}
                        </span>
                        <button type="button" onClick={() => void clear(kind.kind)}>
                          Clear override of {kind.kind}
                        </button>
                      </div>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <form className="card stack" onSubmit={override}>
            <h3>Override a kind</h3>
            <label className="stack">
              <span>Kind</span>
              <select name="kind" required>
                {kinds.map((kind) => (
                  <option key={kind.kind} value={kind.kind}>
                    {kind.kind}
                  </option>
                ))}
              </select>
            </label>
            <label className="stack">
              <span>Limit per key (empty: none)</span>
              <input name="limit" type="number" min={1} max={10_000} step={1} />
            </label>
            <label className="stack">
              <span>Between keys</span>
              <select name="fairness" defaultValue="round-robin">
                <option value="round-robin">keys take turns</option>
                <option value="oldest-first">oldest first</option>
              </select>
            </label>
            <label className="stack">
              <span>Reason</span>
              <input name="reason" required maxLength={500} />
            </label>
            <button type="submit">Override fair share</button>
          </form>
        </>
      )}
    </section>
  );
}
