import type { Metadata } from "next";
import { FairShareView } from "@/components/engineer/fair-share-view";
import { authorizePage } from "@/lib/auth/page";
import { readPool } from "@/lib/db/read-pool";
import { readFairShare } from "@/lib/fair-share/view";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Fair share", robots: { index: false, follow: false } };

export default async function FairSharePage() {
  await authorizePage("technical:read", "/fair-share");
  return (
    <div className="stack">
      <h1>Fair share</h1>
      <FairShareView initial={await readFairShare(readPool())} />
    </div>
  );
}
