/**
 * /review — the support queue: steps whose external outcome only a person can settle, overdue
 * first. Filters live in the URL (a plain GET form and view links), pages are keyset cursors.
 */
import type { Metadata } from "next";
import { ReviewQueue, type Filters } from "@/components/review/review-queue";
import { reviewQueueQuery } from "@/lib/api/contract/support";
import { readPool } from "@/lib/db/read-pool";
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
  const filters: Filters = {
    status: raw.status === "resolved" ? "resolved" : "open",
    adapter: (raw.adapter as string) ?? "",
    q: (raw.q as string) ?? "",
    holder: raw.holder === "mine" || raw.holder === "unassigned" ? raw.holder : "",
    overdue: raw.overdue === "true",
  };
  const viewer = actorName(staff);
  if (!parsed.success) {
    const problem = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    return <ReviewQueue filters={filters} page={null} problem={problem} cursor={null} viewer={viewer} />;
  }
  const page = await listReviewCases(readPool(), parsed.data, viewer);
  return <ReviewQueue filters={filters} page={page} problem={null} cursor={(raw.cursor as string) ?? null} viewer={viewer} />;
}
