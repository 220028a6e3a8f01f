/**
 * End users of a parent request see one calm line of progress for its children, in the parent
 * step's own words ("Preparing 3 of 5 parcels"), never the children's steps; the counts show only
 * while the children run.
 */
import { expect, test } from "vitest";
import { ENGINE_WORDS } from "@/lib/definitions/words";
import { projectForEndUser } from "@/lib/projection/project";
import type { ProjectionSnapshot, StepSnapshot, StepState } from "@/lib/projection/types";

const T0 = new Date("2026-12-02T10:00:00Z");
const WORDS = {
  take: { upcoming: "Order received", current: "Checking your order", done: "Order checked" },
  ship: { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "All {total} parcels prepared" },
};

const step = (name: keyof typeof WORDS, position: number, state: StepState, wait: StepSnapshot["wait"] = null): StepSnapshot => ({
  name,
  position,
  state,
  externalEffect: false,
  milestone: WORDS[name],
  attemptsStarted: state === "blocked" ? 0 : 1,
  interrupted: false,
  underReview: false,
  longerThanUsual: false,
  wait,
  updatedAt: T0,
  completedAt: state === "completed" ? T0 : null,
});

const order = (status: ProjectionSnapshot["status"], ship: StepState, wait: StepSnapshot["wait"] = null): ProjectionSnapshot => ({
  workflowId: "0f3a9c2e-1b2d-4e5f-8a9b-0c1d2e3f4a5b",
  kind: "order",
  input: { orderId: "42" },
  title: "Order {orderId}",
  status,
  customerReason: null,
  deadlinePassed: false,
  createdAt: T0,
  updatedAt: T0,
  steps: [step("take", 0, "completed"), step("ship", 1, ship, wait)],
});

test("while its children run, the parent reads as one line in its own words, counting them", () => {
  const view = projectForEndUser(order("active", "waiting", { room: "children", ended: 3, total: 5 }));
  expect(view.headline.label).toBe("Preparing");
  expect(view.happening).toBe("Preparing 3 of 5 parcels.");
  expect(view.milestones.map((m) => [m.label, m.status])).toEqual([
    ["Order checked", "done"],
    ["Preparing 3 of 5 parcels", "current"],
  ]);
  const text = JSON.stringify(view);
  for (const word of ENGINE_WORDS) expect(text.toLowerCase()).not.toContain(word.toLowerCase());
});

test("before the children start and after they end, the counts are left out rather than guessed", () => {
  expect(projectForEndUser(order("active", "leased")).milestones[1]!.label).toBe("Preparing parcels");
  expect(projectForEndUser(order("active", "blocked")).milestones[1]!.label).toBe("Parcels");
  expect(projectForEndUser(order("completed", "completed")).milestones[1]!.label).toBe("All parcels prepared");
});
