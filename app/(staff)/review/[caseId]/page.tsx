/** /review/<caseId> — one case: the evidence beside the decision. */
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { ReviewCase } from "@/components/review/review-case";
import { reviewCaseParams } from "@/lib/api/contract/support";
import { pool, prisma } from "@/lib/db/pool";
import { NotFoundError } from "@/lib/engine/errors";
import { reviewCaseDetail } from "@/lib/review/case";
import { authorizePage } from "@/lib/auth/page";
import { may } from "@/lib/auth/roles";
import { actorName } from "@/lib/auth/staff";
import { supportColleagues } from "@/lib/review/ownership";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Review case" };

export default async function ReviewCasePage({ params }: { params: Promise<{ caseId: string }> }) {
  const staff = await authorizePage("review:read", `/review/${(await params).caseId}`);
  const parsed = reviewCaseParams.safeParse(await params);
  if (!parsed.success) notFound();
  const [detail, colleagues] = await Promise.all([
    reviewCaseDetail({ pool: pool(), prisma: prisma() }, parsed.data.caseId).catch((error: unknown) => {
      if (error instanceof NotFoundError) notFound();
      throw error;
    }),
    supportColleagues(pool()),
  ]);
  return (
    <ReviewCase
      detail={detail}
      viewer={actorName(staff)}
      colleagues={colleagues.map((colleague) => colleague.email)}
      canAct={may(staff.roles, "review:resolve")}
    />
  );
}
