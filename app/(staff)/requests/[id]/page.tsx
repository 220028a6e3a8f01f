import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { requestPageParams } from "@/lib/api/contract/engineer/request-page";
import { may } from "@/lib/auth/roles";
import { authorizePage } from "@/lib/auth/page";
import { readPool } from "@/lib/db/read-pool";
import { readSnapshot } from "@/lib/db/snapshot";
import { NotFoundError } from "@/lib/engine/errors";
import { childrenOfRequest, parentOfRequest } from "@/lib/children/read";
import { readRequestPage } from "@/lib/requests/page/read";
import { traceUrlOfRequest } from "@/lib/requests/trace-link";
import { RequestPageView } from "@/components/engineer/request-page";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Request ${id.slice(0, 8)}`, robots: { index: false, follow: false } };
}

/** One request's whole story, first painted from the read pool; the view then polls /api/requests/{id}/timeline. */
export default async function RequestPage({ params }: { params: Promise<{ id: string }> }) {
  const staff = await authorizePage("technical:read", `/requests/${(await params).id}`);
  const parsed = requestPageParams.safeParse(await params);
  if (!parsed.success) notFound();
  try {
    const id = parsed.data.id;
    // The tree and the trace link are read once with the page, in its snapshot; the timeline is what polls.
    const [initial, parent, children, traceUrl] = await readSnapshot(readPool(), (db) =>
      Promise.all([readRequestPage(db, id), parentOfRequest(db, id), childrenOfRequest(db, id), traceUrlOfRequest(db, id)]),
    );
    return <RequestPageView initial={initial} canOperate={may(staff.roles, "requests:operate")} links={{ parent, children, traceUrl }} />;
  } catch (error) {
    if (error instanceof NotFoundError) notFound();
    throw error;
  }
}
