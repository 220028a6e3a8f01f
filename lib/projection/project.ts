/**
 * What an end user sees of their request: one calm headline, a plain sentence of what is
 * happening and what happens next, and a milestone per step. Built from durable state only, by
 * one exhaustive mapping (SPEC "Projection for end users"):
 *
 *   needs review    a step's outcome is unknown and a person is checking (review case open,
 *                   integrity conflict): it outranks every other state but Completed
 *   completed       the workflow completed: every step has its conclusion
 *   cancelled       the workflow was cancelled (and what it had done is undone, when it undoes)
 *   not completed   the workflow failed (budget, deadline, or support stopped it)
 *   cancelling      cancelled, and what it had done is being undone (lib/compensation):
 *                   "Refunding your payment", in the undo's own words
 *   reversing       it could not be completed, and what it had done is being undone
 *   recovering      a step is running again after an earlier try was interrupted
 *   waiting         an external service has been called (or is waiting to be called again), or
 *                   the request waits for something from outside (an event wait)
 *   scheduled       all it does now is wait for a time (a timer): it goes on by itself then
 *   preparing       nothing has been sent to an external service yet
 *
 * A step under review may name the headline in the workflow's own words (its milestone's `review`).
 * A step that waits says so in the workflow's own words (its milestone's `current`); a timer's
 * words may name its time as `{until}` ("We'll remind you on {until}"), shown in the time zone
 * the step meant, or UTC.
 *
 * While it is preparing, waiting or recovering, a step that has waited to settle much longer than
 * the same step of its kind usually does makes the request "longer than usual": the headline
 * stays, and what happens next says so calmly.
 *
 * Engine words never leave this module: a change of hands between runners adds no milestone and
 * no text; a reason is shown only when a person wrote it for the customer.
 */
import type { MilestoneStatus, ProjectionSnapshot, SnapshotWait, StepSnapshot, TrackingHeadline, TrackingView, TrackingTone } from "./types";

export const HEADLINES: Record<TrackingHeadline, { label: string; tone: TrackingTone }> = {
  preparing: { label: "Preparing", tone: "neutral" },
  scheduled: { label: "Scheduled", tone: "neutral" },
  waiting: { label: "Waiting on an external service", tone: "neutral" },
  recovering: { label: "Recovering execution", tone: "attention" },
  needs_review: { label: "Delivery status needs review", tone: "attention" },
  completed: { label: "Completed", tone: "ok" },
  cancelled: { label: "Cancelled", tone: "stopped" },
  not_completed: { label: "Could not be completed", tone: "stopped" },
  cancelling: { label: "Cancelling", tone: "neutral" },
  reversing: { label: "Could not be completed — reversing", tone: "neutral" },
};

/** The headlines of a request still under way (workflow active), in the order it usually meets them. */
export const IN_FLIGHT_HEADLINES = ["preparing", "scheduled", "waiting", "recovering", "needs_review"] as const satisfies readonly TrackingHeadline[];
export type InFlightHeadline = (typeof IN_FLIGHT_HEADLINES)[number];

/** A step's words before, during and after it runs, and the service it waits on. */
type StepWords = { readonly todo: string; readonly doing: string; readonly done: string; readonly service: string | null };

/** When a timer is due, as its end user reads it: "3 December at 09:00", in the zone the step meant (UTC otherwise). */
export function untilWords(wait: Extract<SnapshotWait, { room: "timer" }>): string {
  const timeZone = wait.timeZone ?? "UTC";
  const formatted = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "long", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone }).format(wait.dueAt);
  return wait.timeZone ? formatted : `${formatted} UTC`;
}

/**
 * `{until}` in a timer's words, filled while it waits; elsewhere the placeholder reads as "later".
 * `{ended}` and `{total}` in a child step's words count its children while they run ("Preparing 3
 * of 5 parcels"); before they start, or once they have all ended, the counts are not known here
 * and read as "the" and "all" would not: the words are shown without them ("Preparing parcels").
 */
const withUntil = (text: string, step: StepSnapshot): string => {
  const timed = text.includes("{until}") ? text.replaceAll("{until}", step.wait?.room === "timer" ? untilWords(step.wait) : "later") : text;
  if (!/\{(ended|total)\}/.test(timed)) return timed;
  if (step.wait?.room === "children") return timed.replaceAll("{ended}", String(step.wait.ended)).replaceAll("{total}", String(step.wait.total));
  return timed.replace(/\s*\{ended\}\s+of\s+\{total\}\s*/g, " ").replace(/\s*\{(ended|total)\}\s*/g, " ").replace(/\s{2,}/g, " ").trim();
};

/** The definition's milestone words; a step without any (a request made by hand) gets a numbered label. */
function wordsFor(step: StepSnapshot, index: number): StepWords {
  if (step.milestone) {
    const { upcoming, current, done, service } = step.milestone;
    return {
      todo: withUntil(upcoming, step),
      doing: withUntil(current, step),
      done: withUntil(done, step),
      service: service ?? (step.externalEffect ? "an external service" : null),
    };
  }
  const label = `Step ${index + 1}`;
  return { todo: label, doing: label, done: `${label} done`, service: step.externalEffect ? "an external service" : null };
}

const ACTIVE_STEP_STATES = new Set<StepSnapshot["state"]>(["ready", "leased"]);
const isTimerWait = (step: StepSnapshot): boolean => step.state === "waiting" && step.wait?.room === "timer";
const isEventWait = (step: StepSnapshot): boolean => step.state === "waiting" && step.wait?.room === "event";
const isChildrenWait = (step: StepSnapshot): boolean => step.state === "waiting" && step.wait?.room === "children";
const DONE_STEP_STATES = new Set<StepSnapshot["state"]>(["completed", "completed_without_effect"]);
const STOPPED_STEP_STATES = new Set<StepSnapshot["state"]>(["cancelled", "rejected", "failed"]);

/** The user-facing reference: short, quotable, derived from the request's id (not its secret link). */
export function referenceOf(workflowId: string): string {
  const hex = workflowId.replaceAll("-", "").toUpperCase();
  return `FL-${hex.slice(0, 4)}-${hex.slice(4, 8)}`;
}

export function headlineOf(snapshot: ProjectionSnapshot): TrackingHeadline {
  const { status, steps } = snapshot;
  if (status === "completed") return "completed";
  if (steps.some((step) => step.underReview || step.state === "indeterminate")) return "needs_review";
  if (status === "cancelled") return "cancelled";
  if (status === "failed") return "not_completed";
  if (status === "cancelling") return "cancelling";
  if (status === "failing") return "reversing";
  const active = steps.filter((step) => ACTIVE_STEP_STATES.has(step.state));
  if (active.some((step) => step.interrupted)) return "recovering";
  if (steps.some(isEventWait)) return "waiting";
  if (active.length === 0 && steps.some(isTimerWait)) return "scheduled";
  const externalBegun = steps.some((step) => step.externalEffect && (step.attemptsStarted > 0 || DONE_STEP_STATES.has(step.state)));
  return externalBegun ? "waiting" : "preparing";
}

function milestoneStatus(step: StepSnapshot, workflowEnded: boolean): MilestoneStatus {
  switch (step.state) {
    case "completed":
    case "completed_without_effect":
      return "done";
    case "superseded":
      return "skipped";
    case "indeterminate":
      return "attention";
    case "ready":
    case "leased":
    case "waiting":
      return workflowEnded ? "stopped" : "current";
    case "blocked":
      return workflowEnded ? "stopped" : "upcoming";
    case "cancelled":
    case "rejected":
    case "failed":
      return "stopped";
  }
}

/** The external service the request is with right now, in words, or a generic phrase. */
function currentService(steps: readonly StepSnapshot[]): string {
  const current =
    steps.find((step) => step.underReview || step.state === "indeterminate") ??
    steps.find((step) => ACTIVE_STEP_STATES.has(step.state) && step.externalEffect) ??
    steps.find((step) => ACTIVE_STEP_STATES.has(step.state));
  const index = current ? steps.indexOf(current) : -1;
  return (current && wordsFor(current, index).service) ?? "an external service";
}

/** The review headline in the workflow's own words: the first step under review that declares them. */
function reviewLabelOf(steps: readonly StepSnapshot[]): { label?: string } {
  const words = steps.find((step) => (step.underReview || step.state === "indeterminate") && step.milestone?.review)?.milestone?.review;
  return words ? { label: words } : {};
}

/** The sentence of a waiting step, in the workflow's own words: "Waiting for the warehouse to confirm." */
const sentenceOf = (words: string): string => (/[.!?]$/.test(words) ? words : `${words}.`);

function sentences(headline: TrackingHeadline, snapshot: ProjectionSnapshot, reference: string): { happening: string; next: string; reason: string | null } {
  const service = currentService(snapshot.steps);
  const timer = snapshot.steps.find(isTimerWait);
  const event = snapshot.steps.find(isEventWait);
  // A step whose child requests are under way says so in its own words ("Preparing 3 of 5 parcels"), never the children's steps.
  const children = snapshot.steps.find(isChildrenWait);
  const childrenWords = children ? sentenceOf(wordsFor(children, snapshot.steps.indexOf(children)).doing) : null;
  switch (headline) {
    case "preparing":
      if (childrenWords) return { happening: childrenWords, next: "It goes on by itself. Nothing is needed from you.", reason: null };
      return { happening: "We're getting your request ready.", next: "It will be sent on shortly. Nothing is needed from you.", reason: null };
    case "scheduled":
      return {
        happening: sentenceOf(wordsFor(timer!, snapshot.steps.indexOf(timer!)).doing),
        next: `It goes on by itself on ${untilWords(timer!.wait as Extract<SnapshotWait, { room: "timer" }>)}. Nothing is needed from you.`,
        reason: null,
      };
    case "waiting":
      if (event) return { happening: sentenceOf(wordsFor(event, snapshot.steps.indexOf(event)).doing), next: "Nothing is needed from you. This page updates by itself.", reason: null };
      if (childrenWords) return { happening: childrenWords, next: "Nothing is needed from you. This page updates by itself.", reason: null };
      return {
        happening: `We've sent your request to ${service} and are waiting for their confirmation.`,
        next: "Nothing is needed from you. This page updates by itself.",
        reason: null,
      };
    case "recovering":
      return {
        happening: "We hit a temporary problem and are picking your request up again automatically.",
        next: "Nothing is needed from you. This page updates by itself.",
        reason: null,
      };
    case "needs_review":
      return {
        happening: `We couldn't confirm with ${service} whether this went through. Our team is checking before anything is sent again.`,
        next: "No action is needed from you. This page will show the result as soon as it is settled.",
        reason: null,
      };
    case "completed":
      return { happening: "Your request is complete.", next: `Nothing else to do. If you contact us, quote ${reference}.`, reason: null };
    case "cancelling":
    case "reversing": {
      const undoing = snapshot.steps.find((step) => step.undoes && !DONE_STEP_STATES.has(step.state));
      const first = headline === "cancelling" ? "We're cancelling your request" : "We couldn't complete this request";
      return {
        happening: undoing ? `${first} — ${lowerFirst(wordsFor(undoing, snapshot.steps.indexOf(undoing)).doing)}.` : `${first} and are checking what needs to be reversed.`,
        next: "Nothing is needed from you. This page updates by itself.",
        reason: plainReason(snapshot),
      };
    }
    case "cancelled":
      if (undoneWords(snapshot)) {
        return {
          happening: `This request was cancelled — ${undoneWords(snapshot)}.`,
          next: `Nothing more will be done. If this is unexpected, contact us and quote ${reference}.`,
          reason: plainReason(snapshot),
        };
      }
      return {
        happening: "This request was cancelled before it finished.",
        next: `Nothing more will be done. If this is unexpected, contact us and quote ${reference}.`,
        reason: plainReason(snapshot),
      };
    case "not_completed":
      return {
        happening: undoneWords(snapshot) ? `We couldn't complete this request — ${undoneWords(snapshot)}.` : "We couldn't complete this request.",
        next: `Nothing more will be done. If you have questions, contact us and quote ${reference}.`,
        reason: plainReason(snapshot),
      };
  }
}

/** What happens next when a request is taking longer than usual; the headline's own words otherwise. */
function nextWhenLonger(headline: TrackingHeadline, service: string, reference: string): string | null {
  const ask = `If you'd like to ask about it, quote ${reference}.`;
  switch (headline) {
    case "preparing":
      return `This is taking longer than usual to get started. Nothing is needed from you: it goes ahead by itself, and this page updates as soon as it does. ${ask}`;
    case "waiting":
      return `This is taking longer than usual. Nothing is needed from you: we keep waiting for ${service}, and this page updates as soon as they confirm. ${ask}`;
    case "recovering":
      return `This is taking longer than usual. Nothing is needed from you: we keep at it automatically, and this page updates as soon as it moves on. ${ask}`;
    default:
      return null;
  }
}

const lowerFirst = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);

/** What was undone, in the undos' own words ("payment refunded, items released"); null when nothing was. */
function undoneWords(snapshot: ProjectionSnapshot): string | null {
  const undone = snapshot.steps.filter((step) => step.undoes && DONE_STEP_STATES.has(step.state));
  if (undone.length === 0) return null;
  return undone.map((step) => lowerFirst(wordsFor(step, snapshot.steps.indexOf(step)).done)).join(", ");
}

/** Only a reason written for the customer is shown; the engine's own reasons never are. */
function plainReason(snapshot: ProjectionSnapshot): string | null {
  if (snapshot.customerReason) return snapshot.customerReason;
  if (snapshot.deadlinePassed) return "It could not be finished in the time allowed.";
  return null;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const MAX_TITLE_VALUE = 120;

/**
 * The definition's title with `{field}`s taken from the input. A field that is missing or not a
 * plain string or number leaves the generic title: the page never shows "undefined".
 */
function titleOf(snapshot: ProjectionSnapshot): string {
  if (snapshot.title === null) return "Your request";
  const input = (snapshot.input ?? {}) as Record<string, unknown>;
  let complete = true;
  const title = snapshot.title.replace(PLACEHOLDER, (_match, field: string) => {
    const value = Object.hasOwn(input, field) ? input[field] : undefined;
    if (typeof value === "string" && value.trim() !== "") return value.trim().slice(0, MAX_TITLE_VALUE);
    if (typeof value === "number" && Number.isFinite(value)) return String(value);
    complete = false;
    return "";
  });
  return complete ? title : "Your request";
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

export function projectForEndUser(snapshot: ProjectionSnapshot): TrackingView {
  const headline = headlineOf(snapshot);
  const reference = referenceOf(snapshot.workflowId);
  const workflowEnded = snapshot.status !== "active";
  // Undos run on while their request reads cancelling or failing.
  const undoing = snapshot.status === "cancelling" || snapshot.status === "failing";
  const steps = [...snapshot.steps].sort((a, b) => a.position - b.position);
  const milestones = steps.map((step, index) => {
    const words = wordsFor(step, index);
    const status = milestoneStatus(step, workflowEnded && !(undoing && step.undoes));
    const label = status === "done" ? words.done : status === "current" || status === "attention" ? words.doing : words.todo;
    // A step's name is the adopter's identifier: shown to nobody, but stable as a key.
    const key = step.milestone ? step.name : `step-${index + 1}`;
    return { key, label, status, at: status === "done" ? iso(step.completedAt) : null };
  });
  const latestChange = [snapshot.updatedAt, ...steps.map((step) => step.updatedAt)].reduce((a, b) => (b > a ? b : a));
  const said = sentences(headline, { ...snapshot, steps }, reference);
  const longer = steps.some((step) => step.longerThanUsual) ? nextWhenLonger(headline, currentService(steps), reference) : null;
  return {
    reference,
    title: titleOf(snapshot),
    headline: { state: headline, ...HEADLINES[headline], ...(headline === "needs_review" ? reviewLabelOf(steps) : {}) },
    ...said,
    next: longer ?? said.next,
    longerThanUsual: longer !== null,
    milestones,
    createdAt: snapshot.createdAt.toISOString(),
    updatedAt: latestChange.toISOString(),
    terminal: headline === "completed" || headline === "cancelled" || headline === "not_completed",
  };
}
