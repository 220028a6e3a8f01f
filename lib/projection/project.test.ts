/**
 * The end-user projection maps every internal situation of SPEC's table to one calm headline,
 * and no engine word (or engine reason) ever reaches the end user, whatever the state.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ENGINE_WORDS } from "@/lib/definitions/words";
import { STEP_STATES, WORKFLOW_STATUSES } from "@/lib/engine/vocabulary";
import { headlineOf, projectForEndUser, referenceOf } from "./project";
import type { ProjectionSnapshot, StepSnapshot, StepState, WorkflowStatus } from "./types";

const T0 = new Date("2026-11-29T10:00:00Z");
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/** Milestone words as a workflow definition declares them (the demo's, by step name). */
const MILESTONES: Record<string, StepSnapshot["milestone"]> = {
  prepare: { upcoming: "Request received", current: "Checking your request", done: "Request received" },
  reserve: { upcoming: "Reservation", current: "Reserving", done: "Reserved", service: "the reservation service" },
  deliver: { upcoming: "Delivery", current: "Delivering", done: "Delivered", service: "the delivery service" },
  notify: { upcoming: "Confirmation", current: "Sending confirmation", done: "Confirmation sent", service: "the notification service" },
};

const step = (name: string, position: number, state: StepState, extra: Partial<StepSnapshot> = {}): StepSnapshot => ({
  name,
  position,
  state,
  externalEffect: name !== "prepare",
  milestone: MILESTONES[name] ?? null,
  attemptsStarted: state === "blocked" ? 0 : 1,
  interrupted: false,
  underReview: false,
  longerThanUsual: false,
  wait: null,
  updatedAt: later(position),
  completedAt: state === "completed" || state === "completed_without_effect" ? later(position + 1) : null,
  ...extra,
});

/** The demo delivery: prepare → reserve → deliver → notify, with the states given in order. */
function delivery(status: WorkflowStatus, states: [StepState, StepState, StepState, StepState], overrides: Partial<ProjectionSnapshot> = {}, stepExtra: Partial<Record<number, Partial<StepSnapshot>>> = {}): ProjectionSnapshot {
  const names = ["prepare", "reserve", "deliver", "notify"];
  return {
    workflowId: "0f3a9c2e-1b2d-4e5f-8a9b-0c1d2e3f4a5b",
    kind: "delivery",
    input: { recipient: "ada@example.test", message: "hello", deliverVia: "opaque" },
    title: "Delivery to {recipient}",
    status,
    customerReason: null,
    deadlinePassed: false,
    createdAt: T0,
    updatedAt: T0,
    steps: names.map((name, i) => step(name, i, states[i]!, stepExtra[i])),
    ...overrides,
  };
}

describe("the workflow's own words for review", () => {
  test("a step under review that declares review words names the headline with them; without them the headline is the default", () => {
    const words = { ...MILESTONES.deliver!, review: "Refund status needs checking" };
    const declared = projectForEndUser(delivery("active", ["completed", "completed", "indeterminate", "blocked"], {}, { 2: { underReview: true, milestone: words } }));
    expect(declared.headline).toEqual({ state: "needs_review", label: "Refund status needs checking", tone: "attention" });
    const plain = projectForEndUser(delivery("active", ["completed", "completed", "indeterminate", "blocked"], {}, { 2: { underReview: true } }));
    expect(plain.headline).toEqual({ state: "needs_review", label: "Delivery status needs review", tone: "attention" });
    // Review words of a step that is not under review change nothing.
    const elsewhere = projectForEndUser(delivery("active", ["completed", "completed", "indeterminate", "blocked"], {}, { 2: { underReview: true }, 3: { milestone: { ...MILESTONES.notify!, review: "Not this one" } } }));
    expect(elsewhere.headline.label).toBe("Delivery status needs review");
  });
});

describe("SPEC's projection table, row by row", () => {
  test("created, steps before any external call: Preparing", () => {
    expect(headlineOf(delivery("active", ["ready", "blocked", "blocked", "blocked"], {}, { 0: { attemptsStarted: 0 } }))).toBe("preparing");
    expect(headlineOf(delivery("active", ["leased", "blocked", "blocked", "blocked"]))).toBe("preparing");
    // The first external step is ready but nobody has called it yet.
    expect(headlineOf(delivery("active", ["completed", "ready", "blocked", "blocked"], {}, { 1: { attemptsStarted: 0 } }))).toBe("preparing");
  });

  test("external call in flight, status query pending, rate-limited wait: Waiting on an external service", () => {
    expect(headlineOf(delivery("active", ["completed", "leased", "blocked", "blocked"]))).toBe("waiting");
    // A rate-limited wait: handed back without an effect, eligible later; no interruption.
    expect(headlineOf(delivery("active", ["completed", "ready", "blocked", "blocked"], {}, { 1: { attemptsStarted: 1 } }))).toBe("waiting");
    // Between two external steps.
    expect(headlineOf(delivery("active", ["completed", "completed", "ready", "blocked"], {}, { 2: { attemptsStarted: 0 } }))).toBe("waiting");
  });

  test("an earlier try lost its authority and a safe retry or query is under way: Recovering execution", () => {
    expect(headlineOf(delivery("active", ["completed", "completed", "ready", "blocked"], {}, { 2: { interrupted: true } }))).toBe("recovering");
    expect(headlineOf(delivery("active", ["completed", "completed", "leased", "blocked"], {}, { 2: { interrupted: true, attemptsStarted: 2 } }))).toBe("recovering");
  });

  test("a review case open, or an integrity conflict: Delivery status needs review", () => {
    expect(headlineOf(delivery("active", ["completed", "completed", "indeterminate", "blocked"], {}, { 2: { underReview: true } }))).toBe("needs_review");
    // Review outranks a cancelled or failed workflow: the outcome is still unknown.
    expect(headlineOf(delivery("cancelled", ["completed", "completed", "indeterminate", "cancelled"], {}, { 2: { underReview: true } }))).toBe("needs_review");
    expect(headlineOf(delivery("failed", ["completed", "completed", "indeterminate", "blocked"]))).toBe("needs_review");
  });

  test("every step concluded: Completed", () => {
    const view = projectForEndUser(delivery("completed", ["completed", "completed", "completed", "completed"], { updatedAt: later(9) }));
    expect(view.headline).toEqual({ state: "completed", label: "Completed", tone: "ok" });
    expect(view.terminal).toBe(true);
    expect(view.milestones.map((m) => [m.label, m.status])).toEqual([
      ["Request received", "done"],
      ["Reserved", "done"],
      ["Delivered", "done"],
      ["Confirmation sent", "done"],
    ]);
    expect(view.milestones.every((m) => m.at !== null)).toBe(true);
  });

  test("cancelled: Cancelled, with a plain reason only when a person wrote one", () => {
    const view = projectForEndUser(delivery("cancelled", ["completed", "cancelled", "cancelled", "cancelled"]));
    expect(view.headline.label).toBe("Cancelled");
    expect(view.reason).toBeNull();
    expect(view.terminal).toBe(true);
    expect(view.milestones.slice(1).every((m) => m.status === "stopped")).toBe(true);
  });

  test("failed past budget or deadline: Could not be completed, with a plain reason", () => {
    const budget = projectForEndUser(delivery("failed", ["completed", "failed", "blocked", "blocked"]));
    expect(budget.headline.label).toBe("Could not be completed");
    expect(budget.reason).toBeNull();
    const deadline = projectForEndUser(delivery("failed", ["completed", "failed", "blocked", "blocked"], { deadlinePassed: true }));
    expect(deadline.reason).toBe("It could not be finished in the time allowed.");
    const abandoned = projectForEndUser(
      delivery("failed", ["completed", "completed", "failed", "cancelled"], { customerReason: "The recipient's address no longer accepts messages." }),
    );
    expect(abandoned.reason).toBe("The recipient's address no longer accepts messages.");
    expect(abandoned.terminal).toBe(true);
  });
});

describe("steps that wait, in the workflow's own words", () => {
  const WORDS = {
    confirmed: { upcoming: "Warehouse confirmation", current: "Waiting for the warehouse to confirm", done: "The warehouse confirmed" },
    reminder: { upcoming: "Reminder", current: "We'll remind you on {until}", done: "Reminder sent" },
  };
  const order = (states: [StepState, StepState, StepState], waits: Partial<Record<number, StepSnapshot["wait"]>> = {}): ProjectionSnapshot => ({
    ...delivery("active", ["completed", "completed", "blocked", "blocked"]),
    steps: [
      step("reserve", 0, states[0]),
      { ...step("confirmed", 1, states[1]), milestone: WORDS.confirmed, externalEffect: false, wait: waits[1] ?? null },
      { ...step("reminder", 2, states[2]), milestone: WORDS.reminder, externalEffect: false, wait: waits[2] ?? null },
    ],
  });

  test("an event wait reads as waiting, in its own words", () => {
    const view = projectForEndUser(order(["completed", "waiting", "blocked"], { 1: { room: "event" } }));
    expect(view.headline.label).toBe("Waiting on an external service");
    expect(view.happening).toBe("Waiting for the warehouse to confirm.");
    expect(view.milestones.map((m) => [m.label, m.status])).toEqual([
      ["Reserved", "done"],
      ["Waiting for the warehouse to confirm", "current"],
      ["Reminder", "upcoming"],
    ]);
  });

  test("a timer with nothing else to do reads as Scheduled, with its time in the zone it was meant in", () => {
    const dueAt = new Date("2026-12-03T08:00:00Z");
    const paris = projectForEndUser(order(["completed", "completed", "waiting"], { 2: { room: "timer", dueAt, timeZone: "Europe/Paris" } }));
    expect(paris.headline).toEqual({ state: "scheduled", label: "Scheduled", tone: "neutral" });
    expect(paris.happening).toBe("We'll remind you on 3 December at 09:00.");
    expect(paris.next).toBe("It goes on by itself on 3 December at 09:00. Nothing is needed from you.");
    expect(paris.milestones[2]).toMatchObject({ label: "We'll remind you on 3 December at 09:00", status: "current" });
    const utc = projectForEndUser(order(["completed", "completed", "waiting"], { 2: { room: "timer", dueAt, timeZone: null } }));
    expect(utc.happening).toBe("We'll remind you on 3 December at 08:00 UTC.");
    // Once fired, its words are its own again; `{until}` never shows.
    const done = projectForEndUser({ ...order(["completed", "completed", "completed"]), status: "completed" });
    expect(done.milestones.map((m) => m.label)).toEqual(["Reserved", "The warehouse confirmed", "Reminder sent"]);
    expect(projectForEndUser(order(["completed", "completed", "blocked"])).milestones[2]!.label).toBe("Reminder");
  });

  test("a timer beside a step that still runs leaves the headline to that step", () => {
    expect(headlineOf(order(["leased", "completed", "waiting"], { 2: { room: "timer", dueAt: later(60), timeZone: null } }))).toBe("waiting");
  });
});

describe("milestones", () => {
  test("one per step, in order, with plain words for where each one stands", () => {
    const view = projectForEndUser(delivery("active", ["completed", "completed", "indeterminate", "blocked"], {}, { 2: { underReview: true } }));
    expect(view.milestones.map((m) => [m.key, m.label, m.status])).toEqual([
      ["prepare", "Request received", "done"],
      ["reserve", "Reserved", "done"],
      ["deliver", "Delivering", "attention"],
      ["notify", "Confirmation", "upcoming"],
    ]);
    expect(view.happening).toContain("the delivery service");
  });

  test("a change of hands (a new try of the same step) adds no milestone", () => {
    const first = projectForEndUser(delivery("active", ["completed", "leased", "blocked", "blocked"]));
    const second = projectForEndUser(delivery("active", ["completed", "leased", "blocked", "blocked"], {}, { 1: { attemptsStarted: 3, interrupted: true } }));
    expect(second.milestones).toHaveLength(first.milestones.length);
    expect(second.milestones.map((m) => m.label)).toEqual(first.milestones.map((m) => m.label));
  });

  test("superseded steps show as skipped; steps without milestone words get neutral ones", () => {
    const view = projectForEndUser({
      ...delivery("active", ["completed", "completed", "completed", "completed"]),
      kind: "other",
      title: null,
      steps: [step("x-adapter-call", 0, "superseded"), step("lease-worker-y", 1, "leased")],
    });
    expect(view.title).toBe("Your request");
    expect(view.milestones.map((m) => [m.label, m.status])).toEqual([
      ["Step 1", "skipped"],
      ["Step 2", "current"],
    ]);
  });
});

test("the title takes its fields from the input, and falls back to neutral words when one is missing", () => {
  const base = delivery("active", ["ready", "blocked", "blocked", "blocked"]);
  expect(projectForEndUser(base).title).toBe("Delivery to ada@example.test");
  expect(projectForEndUser({ ...base, title: "Order {orderId} of {count}", input: { orderId: "A-7", count: 3 } }).title).toBe("Order A-7 of 3");
  expect(projectForEndUser({ ...base, input: {} }).title).toBe("Your request");
  expect(projectForEndUser({ ...base, input: { recipient: { nested: true } } }).title).toBe("Your request");
});

describe("longer than usual", () => {
  test("while waiting, recovering or preparing, the headline stays and what happens next says so calmly", () => {
    const waiting = projectForEndUser(delivery("active", ["completed", "leased", "blocked", "blocked"], {}, { 1: { longerThanUsual: true } }));
    expect(waiting).toMatchObject({ longerThanUsual: true, headline: { label: "Waiting on an external service" } });
    expect(waiting.next).toBe(
      "This is taking longer than usual. Nothing is needed from you: we keep waiting for the reservation service, and this page updates as soon as they confirm. If you'd like to ask about it, quote FL-0F3A-9C2E.",
    );
    const recovering = projectForEndUser(delivery("active", ["completed", "leased", "blocked", "blocked"], {}, { 1: { longerThanUsual: true, interrupted: true } }));
    expect(recovering).toMatchObject({ longerThanUsual: true, headline: { state: "recovering" } });
    expect(recovering.next).toMatch(/^This is taking longer than usual\. Nothing is needed from you: we keep at it automatically/);
    const preparing = projectForEndUser(delivery("active", ["ready", "blocked", "blocked", "blocked"], {}, { 0: { longerThanUsual: true, attemptsStarted: 0 } }));
    expect(preparing.next).toMatch(/^This is taking longer than usual to get started\./);
  });

  test("on time, under review or finished, nothing is said about usual times", () => {
    const onTime = projectForEndUser(delivery("active", ["completed", "leased", "blocked", "blocked"]));
    expect(onTime).toMatchObject({ longerThanUsual: false, next: "Nothing is needed from you. This page updates by itself." });
    const review = projectForEndUser(delivery("active", ["completed", "completed", "indeterminate", "blocked"], {}, { 2: { longerThanUsual: true, underReview: true } }));
    expect(review).toMatchObject({ longerThanUsual: false, headline: { state: "needs_review" } });
    expect(review.next).not.toMatch(/longer than usual/);
  });
});

test("the reference is short, quotable and stable per request", () => {
  expect(referenceOf("0f3a9c2e-1b2d-4e5f-8a9b-0c1d2e3f4a5b")).toBe("FL-0F3A-9C2E");
});


test("no engine word reaches the end user, for any combination of states", () => {
  const engineWord = new RegExp(ENGINE_WORDS.join("|"), "i");
  fc.assert(
    fc.property(
      fc.constantFrom(...WORKFLOW_STATUSES),
      fc.array(fc.record({ state: fc.constantFrom(...STEP_STATES), interrupted: fc.boolean(), underReview: fc.boolean(), longer: fc.boolean(), attempts: fc.nat(5), known: fc.boolean() }), { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      (status, drafts, deadlinePassed) => {
        const names = ["prepare", "reserve", "deliver", "notify"];
        const view = projectForEndUser({
          ...delivery(status, ["completed", "completed", "completed", "completed"], { deadlinePassed }),
          steps: drafts.map((d, i) =>
            step(d.known ? names[i % 4]! : `adapter-lease-${i}`, i, d.state, { interrupted: d.interrupted, underReview: d.underReview, longerThanUsual: d.longer, attemptsStarted: d.attempts }),
          ),
        });
        const text = JSON.stringify(view);
        expect(text).not.toMatch(engineWord);
        expect(view.terminal).toBe(["completed", "cancelled", "not_completed"].includes(view.headline.state));
      },
    ),
    { numRuns: 500 },
  );
});
