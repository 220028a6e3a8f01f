"use client";

/**
 * The end user's view of one request: a headline with an icon and words (never colour alone),
 * what is happening and what happens next, milestones, and a reference to quote. It refreshes
 * itself every few seconds while the tab is visible and stops once nothing more will change.
 */
import { useQuery } from "@tanstack/react-query";
import { toast } from "sonner";
import { ThemeToggle } from "@/components/ui/theme-toggle";
import { Time } from "@/components/ui/time";
import type { TrackingView as TrackingViewData } from "@/lib/projection/types";
import styles from "./track.module.css";

const POLL_EVERY_MS = 4_000;

const ICONS: Record<TrackingViewData["headline"]["tone"], string> = { neutral: "◔", attention: "!", ok: "✓", stopped: "■" };
const MILESTONE_ICONS: Record<TrackingViewData["milestones"][number]["status"], string> = {
  done: "✓", skipped: "–", current: "●", upcoming: "○", attention: "!", stopped: "■",
};
const MILESTONE_WORDS: Record<TrackingViewData["milestones"][number]["status"], string> = {
  done: "done", skipped: "not needed", current: "in progress", upcoming: "not started", attention: "being checked", stopped: "stopped",
};

// no-cache: the browser revalidates with the ETag it holds, so an unchanged view costs a 304.
async function fetchView(token: string): Promise<TrackingViewData> {
  const response = await fetch(`/api/track/${encodeURIComponent(token)}`, { cache: "no-cache" });
  if (!response.ok) throw new Error(`the page could not refresh (${response.status})`);
  return (await response.json()) as TrackingViewData;
}

export function TrackView({ token, initial }: { token: string; initial: TrackingViewData }) {
  const query = useQuery({
    queryKey: ["track", token],
    queryFn: () => fetchView(token),
    initialData: initial,
    refetchInterval: (current) => (current.state.data?.terminal ? false : POLL_EVERY_MS),
    refetchIntervalInBackground: false,
  });
  const view = query.data;

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(view.reference);
      toast.success(`Reference ${view.reference} copied`);
    } catch {
      toast.error("Couldn't copy. Select the reference and copy it by hand.");
    }
  };

  return (
    <div className={styles.page}>
      <header className={styles.header}>
        <span className={styles.brand}>Fenceline</span>
        <ThemeToggle />
      </header>
      <main id="main" className={styles.main}>
        <p className={styles.eyebrow}>Your request</p>
        <h1 className={styles.title}>{view.title}</h1>

        <section aria-labelledby="status-heading" className={`${styles.status} ${styles[view.headline.tone]}`}>
          <h2 id="status-heading" className="visually-hidden">
            Status
          </h2>
          <p className={styles.headline} aria-live="polite" aria-atomic="true" data-testid="headline">
            <span className={styles.icon} aria-hidden="true">
              {ICONS[view.headline.tone]}
            </span>
            {view.headline.label}
          </p>
          <p>{view.happening}</p>
          {view.reason && (
            <p>
              <strong>Reason:</strong> {view.reason}
            </p>
          )}
          <p className={styles.next}>
            <strong>What happens next:</strong> {view.next}
          </p>
        </section>

        <section aria-labelledby="progress-heading">
          <h2 id="progress-heading">Progress</h2>
          <ol className={styles.milestones}>
            {view.milestones.map((milestone) => (
              <li key={milestone.key} className={styles[milestone.status]}>
                <span className={styles.marker} aria-hidden="true">
                  {MILESTONE_ICONS[milestone.status]}
                </span>
                <span className={styles.milestoneLabel}>{milestone.label}</span>
                <span className="visually-hidden">, {MILESTONE_WORDS[milestone.status]}</span>
                {milestone.at && (
                  <span className={styles.when}>
                    <Time value={milestone.at} />
                  </span>
                )}
              </li>
            ))}
          </ol>
        </section>

        <section aria-labelledby="reference-heading" className={styles.reference}>
          <h2 id="reference-heading">Your reference</h2>
          <p className="row">
            <code className={styles.code} data-testid="reference">
              {view.reference}
            </code>
            <button type="button" onClick={copy}>
              Copy reference
            </button>
          </p>
          <p className="muted">Quote this reference if you contact us about this request.</p>
        </section>

        <p className={`muted ${styles.footer}`}>
          Requested <Time value={view.createdAt} /> · last change <Time value={view.updatedAt} />
          {view.terminal ? "" : " · this page refreshes itself"}
        </p>
        {query.isError && (
          <p className="muted" role="status">
            We couldn&apos;t refresh just now; we&apos;ll try again shortly.
          </p>
        )}
      </main>
    </div>
  );
}
