/**
 * Client-side access to the engineer API: one fetch helper that turns a problem+json refusal
 * into an Error carrying its detail, and one query-key factory shared by every view.
 */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function parse<T>(response: Response): Promise<T> {
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const detail = body && typeof body === "object" && "detail" in body ? String((body as { detail: unknown }).detail) : `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, detail);
  }
  return body as T;
}

export async function getJson<T>(url: string): Promise<T> {
  return parse<T>(await fetch(url, { headers: { accept: "application/json" }, cache: "no-store" }));
}

export async function sendJson<T>(url: string, method: "POST" | "PUT", body?: unknown): Promise<T> {
  return parse<T>(
    await fetch(url, {
      method,
      headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

export const engineerKeys = {
  requests: (query: string) => ["engineer", "requests", query] as const,
  steps: (query: string) => ["engineer", "steps", query] as const,
  step: (id: string) => ["engineer", "step", id] as const,
  metrics: (query: string) => ["engineer", "metrics", query] as const,
  workers: () => ["engineer", "workers"] as const,
  fairShare: () => ["engineer", "fair-share"] as const,
  schedules: () => ["engineer", "schedules"] as const,
  faults: () => ["engineer", "lab", "faults"] as const,
};

/** Polling cadence of the engineer views; React Query pauses it while the tab is hidden. */
export const POLL_MS = 2_000;

export const shortId = (id: string) => id.slice(0, 8);
