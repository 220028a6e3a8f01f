import type { Metadata } from "next";
import { listRequestsQuery } from "@/lib/api/contract/engineer/requests";
import { readPool } from "@/lib/db/read-pool";
import { listRequests } from "@/lib/requests/list";
import { RequestsView } from "@/components/engineer/requests-view";
import { flatParams, queryString, type SearchParams } from "@/components/engineer/search-params";
import { authorizePage } from "@/lib/auth/page";
import { may } from "@/lib/auth/roles";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Requests", robots: { index: false, follow: false } };

/** First paint from the database; the client view then polls /api/requests with the same filters. */
export default async function RequestsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const staff = await authorizePage("technical:read", "/requests");
  const values = flatParams(await searchParams);
  const parsed = listRequestsQuery.safeParse(values);
  const initial = parsed.success ? await listRequests(readPool(), parsed.data) : null;
  const initialError = parsed.success ? null : `the filters in the address are not valid (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")})`;
  return (
    <div className="stack">
      <h1>Requests</h1>
      <p className="muted">Each request and its steps; open a request for its timeline and actions, or a step for its lease history.</p>
      <RequestsView query={queryString(values)} values={values} initial={initial} initialError={initialError} canOperate={may(staff.roles, "requests:operate")} />
    </div>
  );
}
