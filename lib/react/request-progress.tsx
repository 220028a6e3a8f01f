/**
 * `<RequestProgress>`: the calm projection `/track/<token>` shows, on the adopter's own page. A
 * headline with an icon and words (never colour alone) announced politely when it changes, what
 * is happening and what happens next, the milestones in the workflow's own words, and the
 * reference to quote. Styled inline from CSS variables (`--fenceline-*`, light defaults), so the
 * adopter's stylesheet themes it without a stylesheet of ours to load or a class to override.
 */
import { useId, type CSSProperties, type ReactElement } from "react";
import type { MilestoneStatus, TrackingTone, TrackingView } from "@/lib/projection/types";
import { TrackingNotFoundError, useRequestProgress, type RequestProgressOptions } from "./use-request-progress";

/** What {@link RequestProgress} takes: the tracking token, where Fenceline is, and how it looks. */
export type RequestProgressProps = RequestProgressOptions & {
  /** The request's tracking token (`request.trackingToken` from `fenceline/client`). */
  readonly token: string;
  /** The level of its title's heading, to fit the page's outline. @defaultValue 2 */
  readonly headingLevel?: 2 | 3 | 4;
  readonly className?: string;
};

const v = (name: string, fallback: string) => `var(--fenceline-${name}, ${fallback})`;

// Light defaults; a dark theme sets the same variables (see the package README).
const COLOURS = {
  text: v("text", "#1b1b18"),
  muted: v("muted", "#55554f"),
  surface: v("surface", "#ffffff"),
  surface2: v("surface-2", "#f0f0ed"),
  border: v("border", "#d9d9d4"),
};
const TONES: Record<TrackingTone | "current", { fg: string; bg: string }> = {
  neutral: { fg: v("info", "#1f4f99"), bg: v("info-bg", "#e2ebf9") },
  current: { fg: v("info", "#1f4f99"), bg: v("info-bg", "#e2ebf9") },
  attention: { fg: v("warn", "#8a4b00"), bg: v("warn-bg", "#fdf0dc") },
  ok: { fg: v("ok", "#1d6b3a"), bg: v("ok-bg", "#e3f3e8") },
  stopped: { fg: v("bad", "#a1261d"), bg: v("bad-bg", "#fbe4e1") },
};

const ICONS: Record<TrackingTone, string> = { neutral: "◔", attention: "!", ok: "✓", stopped: "■" };
const MILESTONE_ICONS: Record<MilestoneStatus, string> = { done: "✓", skipped: "–", current: "●", upcoming: "○", attention: "!", stopped: "■" };
const MILESTONE_WORDS: Record<MilestoneStatus, string> = {
  done: "done",
  skipped: "not needed",
  current: "in progress",
  upcoming: "not started",
  attention: "being checked",
  stopped: "stopped",
};
const MILESTONE_TONE: Record<MilestoneStatus, { fg: string; bg: string }> = {
  done: TONES.ok,
  current: TONES.current,
  attention: TONES.attention,
  stopped: TONES.stopped,
  upcoming: { fg: COLOURS.muted, bg: COLOURS.surface2 },
  skipped: { fg: COLOURS.muted, bg: COLOURS.surface2 },
};

const HIDDEN: CSSProperties = { position: "absolute", width: 1, height: 1, padding: 0, margin: -1, overflow: "hidden", clip: "rect(0 0 0 0)", whiteSpace: "nowrap", border: 0 };
const ROOT: CSSProperties = {
  color: COLOURS.text,
  background: COLOURS.surface,
  border: `1px solid ${COLOURS.border}`,
  borderRadius: v("radius", "8px"),
  padding: "1rem 1.1rem",
  fontFamily: v("font", "inherit"),
  lineHeight: 1.5,
};
const when = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function Heading({ level, id, children }: { level: 2 | 3 | 4; id: string; children: string }): ReactElement {
  const Tag = `h${level}` as const;
  return (
    <Tag id={id} style={{ margin: 0, fontSize: "1.25rem", overflowWrap: "anywhere" }}>
      {children}
    </Tag>
  );
}

function Progress({ view, headingLevel, titleId }: { view: TrackingView; headingLevel: 2 | 3 | 4; titleId: string }): ReactElement {
  const tone = TONES[view.headline.tone];
  return (
    <>
      <Heading level={headingLevel} id={titleId}>
        {view.title}
      </Heading>
      <div style={{ borderLeft: `6px solid ${tone.fg}`, paddingLeft: "0.8rem", margin: "0.8rem 0" }}>
        <p aria-live="polite" aria-atomic="true" data-fenceline="headline" style={{ display: "flex", alignItems: "center", gap: "0.5rem", margin: 0, fontSize: "1.15rem", fontWeight: 700 }}>
          <span aria-hidden="true" style={{ display: "inline-flex", justifyContent: "center", alignItems: "center", width: "1.6rem", height: "1.6rem", borderRadius: 999, background: tone.bg, color: tone.fg }}>
            {ICONS[view.headline.tone]}
          </span>
          {view.headline.label}
        </p>
        <p style={{ margin: "0.4rem 0 0" }}>{view.happening}</p>
        {view.reason && (
          <p style={{ margin: "0.4rem 0 0" }}>
            <strong>Reason:</strong> {view.reason}
          </p>
        )}
        <p style={{ margin: "0.4rem 0 0" }}>
          <strong>What happens next:</strong> {view.next}
        </p>
      </div>
      <ol aria-label="Progress" style={{ listStyle: "none", margin: 0, padding: 0 }}>
        {view.milestones.map((milestone) => {
          const colours = MILESTONE_TONE[milestone.status];
          const quiet = milestone.status === "upcoming" || milestone.status === "skipped";
          return (
            <li key={milestone.key} data-status={milestone.status} style={{ display: "flex", flexWrap: "wrap", alignItems: "baseline", gap: "0.2rem 0.6rem", padding: "0.25rem 0" }}>
              <span aria-hidden="true" style={{ display: "inline-block", width: "1.4rem", textAlign: "center", borderRadius: 999, background: colours.bg, color: colours.fg }}>
                {MILESTONE_ICONS[milestone.status]}
              </span>
              <span style={{ fontWeight: quiet ? 400 : 600, color: quiet ? COLOURS.muted : COLOURS.text }}>{milestone.label}</span>
              <span style={HIDDEN}>, {MILESTONE_WORDS[milestone.status]}</span>
              {milestone.at && (
                <time dateTime={milestone.at} style={{ color: COLOURS.muted, fontSize: "0.9em" }}>
                  {when.format(new Date(milestone.at))}
                </time>
              )}
            </li>
          );
        })}
      </ol>
      <p style={{ margin: "0.8rem 0 0", color: COLOURS.muted }}>
        Your reference:{" "}
        <code data-fenceline="reference" style={{ color: COLOURS.text, background: COLOURS.surface2, border: `1px solid ${COLOURS.border}`, borderRadius: 6, padding: "0.1rem 0.4rem", userSelect: "all" }}>
          {view.reference}
        </code>
      </p>
    </>
  );
}

/**
 * A request's progress as its end user should see it, polled until it ends (see
 * {@link useRequestProgress}). Needs a QueryClientProvider (or `queryClient`). Theme it with the
 * `--fenceline-*` CSS variables: `text`, `muted`, `surface`, `surface-2`, `border`, `info`,
 * `info-bg`, `ok`, `ok-bg`, `warn`, `warn-bg`, `bad`, `bad-bg`, `radius`, `font`.
 *
 * @example
 * ```tsx
 * <QueryClientProvider client={queryClient}>
 *   <RequestProgress token={trackingToken} baseUrl="https://fenceline.example.com" />
 * </QueryClientProvider>
 * ```
 */
export function RequestProgress({ token, headingLevel = 2, className, ...options }: RequestProgressProps): ReactElement {
  const titleId = useId();
  const progress = useRequestProgress(token, options);
  const view = progress.data;
  return (
    <section aria-labelledby={view ? titleId : undefined} aria-label={view ? undefined : "Your request"} className={className} style={ROOT} data-fenceline="progress">
      {view ? (
        <Progress view={view} headingLevel={headingLevel} titleId={titleId} />
      ) : progress.error instanceof TrackingNotFoundError ? (
        <p role="status" style={{ margin: 0 }}>
          We couldn&apos;t find this request. Check the link you were sent.
        </p>
      ) : (
        <p role="status" style={{ margin: 0, color: COLOURS.muted }}>
          {progress.isError ? "We couldn't load your request's progress just now; we'll try again shortly." : "Loading your request's progress…"}
        </p>
      )}
      {view && progress.isError && (
        <p role="status" style={{ margin: "0.6rem 0 0", color: COLOURS.muted }}>
          We couldn&apos;t refresh just now; we&apos;ll try again shortly.
        </p>
      )}
    </section>
  );
}
