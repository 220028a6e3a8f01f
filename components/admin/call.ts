/** Sends one admin call from the browser; answers the problem's detail when it is refused. */
export type CallResult = { ok: true; data: unknown } | { ok: false; detail: string };

export async function call(method: string, url: string, body?: unknown): Promise<CallResult> {
  const response = await fetch(url, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }).catch(() => null);
  if (!response) return { ok: false, detail: "the server did not answer" };
  const data = response.status === 204 ? null : await response.json().catch(() => null);
  return response.ok ? { ok: true, data } : { ok: false, detail: (data as { detail?: string } | null)?.detail ?? `HTTP ${response.status}` };
}
