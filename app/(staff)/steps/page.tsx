import type { Metadata } from "next";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { readPool } from "@/lib/db/read-pool";
import { listSteps } from "@/lib/steps/list";
import { StepsView } from "@/components/engineer/steps-view";
import { flatParams, queryString, type SearchParams } from "@/components/engineer/search-params";
import { authorizePage } from "@/lib/auth/page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Steps", robots: { index: false, follow: false } };

export default async function StepsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  await authorizePage("technical:read", "/steps");
  const values = flatParams(await searchParams);
  const parsed = listStepsQuery.safeParse(values);
  const initial = parsed.success ? await listSteps(readPool(), parsed.data) : null;
  const initialError = parsed.success ? null : `the filters in the address are not valid (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")})`;
  return (
    <div className="stack">
      <h1>Steps</h1>
      <p className="muted">Most recently changed first. Filters are in the address, so a filtered list can be shared or bookmarked.</p>
      <StepsView query={queryString(values)} values={values} initial={initial} initialError={initialError} />
    </div>
  );
}
