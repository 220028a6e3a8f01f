/**
 * /review — the support queue: steps whose external outcome only a person can settle, oldest
 * first. Filters live in the URL (a plain GET form), pages are keyset cursors.
 */
import type { Metadata } from "next";
import { ReviewQueue } from "@/components/review/review-queue";
import { reviewQueueQuery } from "@/lib/api/contract/support";
import { pool } from "@/lib/db/pool";
import { listReviewCases } from "@/lib/review/queue";
import { authorizePage } from "@/lib/auth/page";
import { actorName } from "@/lib/auth/staff";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review queue" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function ReviewQueuePage({ searchParams }: { searchParams: SearchParams }) {
  const staff = await authorizePage("review:read", "/review");
  const raw = Object.fromEntries(Object.entries(await searchParams).filter(([, value]) => typeof value === "string" && value !== ""));
  const parsed = reviewQueueQuery.safeParse(raw);
  const filters = { status: raw.status === "resolved" ? "resolved" : "open", adapter: (raw.adapter as string) ?? "", q: (raw.q as string) ?? "" } as const;
  if (!parsed.success) {
    return <ReviewQueue filters={filters} page={null} problem={parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")} cursor={null} />;
  }
  const page = await listReviewCases(pool(), parsed.data, actorName(staff));
  return <ReviewQueue filters={filters} page={page} problem={null} cursor={(raw.cursor as string) ?? null} />;
}
