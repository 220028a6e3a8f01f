import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { stepIdParams } from "@/lib/api/contract/engineer/steps";
import { readPool } from "@/lib/db/read-pool";
import { NotFoundError } from "@/lib/engine/errors";
import { readStepDetail } from "@/lib/steps/detail";
import { StepDetailView } from "@/components/engineer/step-detail";
import { authorizePage } from "@/lib/auth/page";

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
    return <StepDetailView initial={await readStepDetail(readPool(), parsed.data.id)} />;
  } catch (error) {
    if (error instanceof NotFoundError) notFound();
    throw error;
  }
}
