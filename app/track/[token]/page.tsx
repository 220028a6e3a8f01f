/**
 * /track/<token> — the end user's page. The first paint comes from the server; the client then
 * polls until the request reaches a terminal state. An unknown token renders the app's one
 * not-found page, so a guessed link learns nothing.
 */
import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { TrackView } from "@/components/track/track-view";
import { pool } from "@/lib/db/pool";
import { trackingViewByToken } from "@/lib/projection/read";

export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "Track your request",
  // The site's own description speaks engine; an end user's page speaks theirs.
  description: "Follow the progress of your request.",
  robots: { index: false, follow: false },
  // The link is the only key: never send it to another site.
  referrer: "no-referrer",
};

export default async function TrackPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const view = await trackingViewByToken(pool(), token);
  if (!view) notFound();
  return <TrackView token={token} initial={view} />;
}
