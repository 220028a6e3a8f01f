import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { stepIdParams } from "@/lib/api/contract/engineer/steps";
import { readPool } from "@/lib/db/read-pool";
import { readSnapshot } from "@/lib/db/snapshot";
import { NotFoundError } from "@/lib/engine/errors";
import { readStepDetail } from "@/lib/steps/detail";
import { StepDetailView } from "@/components/engineer/step-detail";
import { StepTreeSection } from "@/components/engineer/step-tree";
import { stepTree } from "@/lib/children/read";
import { authorizePage } from "@/lib/auth/page";
import { traceUrlOf } from "@/lib/telemetry/link";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Step ${id.slice(0, 8)}`, robots: { index: false, follow: false } };
}

export default async function StepPage({ params }: { params: Promise<{ id: string }> }) {
  await authorizePage("technical:read", `/steps/${(await params).id}`);
  const parsed = stepIdParams.safeParse(await params);
  if (!parsed.success) notFound();
  try {
    const id = parsed.data.id;
    // The record and its tree of one moment.
    const [detail, tree] = await readSnapshot(readPool(), (db) => Promise.all([readStepDetail(db, id), stepTree(db, id)]));
    // FENCELINE_TRACE_URL (e.g. https://jaeger.example/trace/{traceId}): the request's trace, when it has one.
    const traceUrl = traceUrlOf(detail.workflow.traceParent);
    return (
      <>
        {traceUrl ? (
          <p className="text-sm">
            <a href={traceUrl} target="_blank" rel="noopener noreferrer" className="underline" data-testid="trace-link">
              View this request&apos;s trace
            </a>
          </p>
        ) : null}
        <StepDetailView initial={detail} />
        <StepTreeSection tree={tree} />
      </>
    );
  } catch (error) {
    if (error instanceof NotFoundError) notFound();
    throw error;
  }
}
