/** /review/<caseId> — one case: the evidence beside the decision. */
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ReviewCase } from "@/components/review/review-case";
import { reviewCaseParams } from "@/lib/api/contract/support";
import { pool } from "@/lib/db/pool";
import { NotFoundError } from "@/lib/engine/errors";
import { reviewCaseDetail } from "@/lib/review/case";
import { authorizePage } from "@/lib/auth/page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review case" };

export default async function ReviewCasePage({ params }: { params: Promise<{ caseId: string }> }) {
  await authorizePage("review:read", `/review/${(await params).caseId}`);
  const parsed = reviewCaseParams.safeParse(await params);
  if (!parsed.success) notFound();
  const detail = await reviewCaseDetail(pool(), parsed.data.caseId).catch((error: unknown) => {
    if (error instanceof NotFoundError) notFound();
    throw error;
  });
  return <ReviewCase detail={detail} />;
}
