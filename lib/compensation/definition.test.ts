/**
 * What an adopter may declare about undoing, checked when the workflow is defined: an undo
 * belongs on an effect step, names an adapter with an effect, speaks to end users without engine
 * words, and runs when the workflow says (cancel, failure, both); a declaration with no effect
 * (compensate with compensateOn "never", or the other way round) is refused, naming the step.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { registrationOf } from "@/lib/definitions/registration";
import { DefinitionError, defineWorkflow, effect } from "@/lib/sdk";
import { fakeDestination } from "@/lib/sdk/testing";

const words = (current: string) => ({ upcoming: current, current, done: `${current}: done` });
const charges = fakeDestination<{ orderId: string }>("opaque", { name: "charges" });
const refunds = fakeDestination<{ orderId: string }>("idempotent", { name: "refunds" });
const undo = { adapter: refunds.adapter, payload: ({ input }: { input: { orderId: string } }) => ({ orderId: input.orderId }), milestone: { current: "Refunding your payment", done: "Payment refunded" } };
const input = z.object({ orderId: z.string() });

const problemsOf = (define: () => unknown): string[] => {
  try {
    define();
  } catch (error) {
    if (error instanceof DefinitionError) return [...error.problems];
    throw error;
  }
  return [];
};

describe("defining an undo", () => {
  test("an effect step's undo is registered with its adapter, its words and when it runs", () => {
    const order = defineWorkflow({ kind: "order", version: 1, input, compensateOn: "both" }).step("charge", {
      adapter: charges.adapter,
      milestone: words("Taking payment"),
      run: async (ctx) => effect(await ctx.invoke({ orderId: ctx.input.orderId })),
      compensate: undo,
    });
    const registration = registrationOf([order]);
    expect(registration.workflows[0]!.steps[0]!.compensate).toEqual({
      adapter: { name: "refunds", version: "1" },
      class: "external",
      attemptBudget: 5,
      milestone: { current: "Refunding your payment", done: "Payment refunded" },
      on: "both",
    });
    // The undo's adapter is registered with its own contract: recovery decides by it.
    expect(registration.adapters.map((adapter) => [adapter.name, adapter.idempotencyKeys])).toEqual([["charges", false], ["refunds", true]]);
  });

  test("a workflow that declares nothing keeps today's behaviour: nothing registered, nothing undone", () => {
    const plain = defineWorkflow({ kind: "plain", version: 1, input }).step("charge", { adapter: charges.adapter, milestone: words("Taking payment") });
    expect(plain.compensateOn).toBe("never");
    expect(registrationOf([plain]).workflows[0]!.steps[0]).not.toHaveProperty("compensate");
  });

  test("an undo on a step with no effect, one without compensateOn, and compensateOn without an undo are refused", () => {
    expect(problemsOf(() => defineWorkflow({ kind: "o", version: 1, input, compensateOn: "cancel" }).step("price", { milestone: words("Pricing"), run: async () => effect({ externalReference: null, result: 1, verification: "direct_response" }), compensate: undo as never })))
      .toEqual([expect.stringContaining("step price: only a step with an adapter has an effect to undo")]);
    expect(problemsOf(() => defineWorkflow({ kind: "o", version: 1, input }).step("charge", { adapter: charges.adapter, milestone: words("Taking payment"), compensate: undo })))
      .toEqual([expect.stringContaining('step charge declares compensate but the workflow\'s compensateOn is "never"')]);
    expect(problemsOf(() => registrationOf([defineWorkflow({ kind: "o", version: 1, input, compensateOn: "failure" }).step("charge", { adapter: charges.adapter, milestone: words("Taking payment") })])))
      .toEqual([expect.stringContaining('compensateOn is "failure" but no step declares compensate')]);
    expect(problemsOf(() => defineWorkflow({ kind: "o", version: 1, input, compensateOn: "sometimes" as never, steps: { charge: { adapter: charges.adapter, milestone: words("Taking payment"), compensate: undo as never } } })))
      .toContainEqual(expect.stringContaining('compensateOn must be one of "cancel", "failure", "both", "never"'));
  });

  test("an undo's words are checked like milestones, and its adapter must have an effect", () => {
    const problems = problemsOf(() =>
      defineWorkflow({ kind: "o", version: 1, input, compensateOn: "cancel" }).step("charge", {
        adapter: charges.adapter,
        milestone: words("Taking payment"),
        compensate: { ...undo, adapter: { ...refunds.adapter, contract: { ...refunds.adapter.contract, externalEffect: false } }, milestone: { current: "Retrying the refund attempt", done: "" }, attemptBudget: 0 },
      }),
    );
    expect(problems).toEqual([
      expect.stringContaining("declares no external effect, so it cannot undo one"),
      expect.stringContaining("compensate.milestone.current \"Retrying the refund attempt\" uses engine words (attempt)"),
      expect.stringContaining("compensate.milestone.done must be a non-empty string"),
      expect.stringContaining("compensate.attemptBudget must be an integer from 1 to 1000, got 0"),
    ]);
  });
});
