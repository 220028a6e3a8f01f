/**
 * A request's end-user progress, polled from Fenceline's `GET /api/track/<token>` on
 * @tanstack/react-query. It polls until the request is terminal; each poll that finds the same
 * view (same ETag) waits half as long again, up to a ceiling, so a request waiting on a slow
 * service costs few polls; it pauses while the tab is hidden and looks again when it returns.
 * The browser revalidates with the ETag it holds, so an unchanged poll is a bodiless 304.
 */
import { useQuery, type QueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useRef } from "react";
import type { TrackingView } from "@/lib/projection/types";

/** Options of {@link useRequestProgress}. */
export type RequestProgressOptions = {
  /** Fenceline's base URL, e.g. `https://fenceline.example.com`. Your page's origin must be listed in its FENCELINE_TRACK_ORIGINS. */
  readonly baseUrl: string;
  /** The first wait between polls, in milliseconds. @defaultValue 2000 */
  readonly intervalMs?: number;
  /** The longest wait between polls, however long nothing changes. @defaultValue 30000 */
  readonly maxIntervalMs?: number;
  /** The react-query client, when it is not the one a QueryClientProvider above gives. */
  readonly queryClient?: QueryClient;
};

/** Thrown by the hook's query when Fenceline tracks no request at the token (a mistyped or foreign link). */
export class TrackingNotFoundError extends Error {
  constructor() {
    super("no request is tracked at this address");
    this.name = "TrackingNotFoundError";
  }
}

const BACKOFF = 1.5;
const RETRIES = 3;

/**
 * Polls a request's progress until it ends: `data` is the same view `/track/<token>` shows
 * (`headline`, `happening`, `next`, `milestones`, `reference`, `terminal`). Needs a
 * QueryClientProvider (or `queryClient`).
 *
 * @example
 * ```tsx
 * const progress = useRequestProgress(token, { baseUrl: "https://fenceline.example.com" });
 * if (progress.data) return <p>{progress.data.headline.label}</p>;
 * ```
 */
export function useRequestProgress(token: string, options: RequestProgressOptions): UseQueryResult<TrackingView, Error> {
  const intervalMs = options.intervalMs ?? 2_000;
  const maxIntervalMs = options.maxIntervalMs ?? 30_000;
  // Consecutive polls that found the view unchanged, and the tag they found.
  const unchanged = useRef({ etag: null as string | null, polls: 0 });
  const url = new URL(`api/track/${encodeURIComponent(token)}`, options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`).toString();

  return useQuery(
    {
      queryKey: ["fenceline", "track", url],
      queryFn: async ({ signal }): Promise<TrackingView> => {
        // no-cache: the browser asks again with the ETag it holds; an unchanged view is a 304.
        const response = await fetch(url, { cache: "no-cache", credentials: "omit", signal, headers: { accept: "application/json" } });
        if (response.status === 404) throw new TrackingNotFoundError();
        if (!response.ok) throw new Error(`progress could not be read (HTTP ${response.status})`);
        const etag = response.headers.get("etag");
        unchanged.current = etag !== null && etag === unchanged.current.etag ? { etag, polls: unchanged.current.polls + 1 } : { etag, polls: 0 };
        return (await response.json()) as TrackingView;
      },
      refetchInterval: (query) => (query.state.data?.terminal ? false : Math.min(maxIntervalMs, intervalMs * BACKOFF ** unchanged.current.polls)),
      // Hidden tabs do not poll; returning to the tab looks at once.
      refetchIntervalInBackground: false,
      refetchOnWindowFocus: true,
      retry: (failures, error) => !(error instanceof TrackingNotFoundError) && failures < RETRIES,
      staleTime: 0,
    },
    options.queryClient,
  );
}
