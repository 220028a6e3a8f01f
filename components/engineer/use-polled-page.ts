"use client";

import { useQuery } from "@tanstack/react-query";
import { POLL_MS, getJson } from "./api";

/**
 * One page of a keyset-paginated list, first painted by the server. The first page polls; a
 * later page (it has a cursor) stays put while it is read. Nothing is fetched after a server error.
 */
export function usePolledPage<Page>(key: readonly unknown[], url: string, values: Record<string, string>, initial: Page | null, initialError: string | null) {
  const onFirstPage = !values.cursor;
  return useQuery({
    queryKey: key,
    queryFn: () => getJson<Page>(url),
    initialData: initial ?? undefined,
    refetchInterval: onFirstPage && !initialError ? POLL_MS : false,
    enabled: !initialError,
  });
}
