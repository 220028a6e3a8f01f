/**
 * A child step's definition is refused at definition time when it cannot work, naming the field:
 * a bound past 1,000, a child that is not a workflow, a step that is two kinds at once, counting
 * words on a step that starts no children. Its request is worked out in the worker: one child
 * without a list, one per element with one, each input checked against the child's schema.
 */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import type { WaitContext } from "@/lib/definitions/context";
import { DefinitionError } from "@/lib/definitions/errors";
import { done } from "@/lib/definitions/outcome";
import { defineWorkflow, type WorkflowDefinition } from "@/lib/definitions/workflow";
import { childrenRequestOf, MAX_CHILDREN } from "./definition";

const words = { upcoming: "Parcels", current: "Preparing {ended} of {total} parcels", done: "Parcels prepared" };
const plain = { upcoming: "Step", current: "Working", done: "Done" };
const parcel = defineWorkflow({ kind: "parcel", version: 2, input: z.object({ parcel: z.string().min(1) }) }).step("pack", { milestone: plain, run: async () => done() });
const parent = () => defineWorkflow({ kind: "order", version: 1, input: z.object({ parcels: z.array(z.string()) }) });
const ctx = (input: unknown) => ({ input, results: {} }) as unknown as WaitContext;

describe("definition time", () => {
  test("a bound past 1,000, or not a whole number, is refused naming children.maxChildren", () => {
    expect(() => parent().children("ship", { milestone: words, workflow: parcel, input: () => ({ parcel: "a" }), maxChildren: MAX_CHILDREN + 1 })).toThrow(/children\.maxChildren must be an integer from 1 to 1000, got 1001/);
    expect(() => parent().children("ship", { milestone: words, workflow: parcel, input: () => ({ parcel: "a" }), maxChildren: 0 })).toThrow(DefinitionError);
  });

  test("a child that is not a workflow, and an input that is not a function, are named", () => {
    expect(() => parent().children("ship", { milestone: words, workflow: { kind: "parcel", version: 1 } as unknown as WorkflowDefinition, input: () => ({}) })).toThrow(
      /children\.workflow must be a workflow made by defineWorkflow/,
    );
    expect(() => parent().children("ship", { milestone: words, workflow: parcel, input: "nope" as never })).toThrow(/children\.input must be a function/);
  });

  test("{ended} and {total} count children only on a child step", () => {
    expect(() => parent().step("x", { milestone: words, run: async () => done() })).toThrow(/only a child step's milestone words can count its children/);
  });

  test("a step is a child step or something else, not both", () => {
    expect(() =>
      defineWorkflow({
        kind: "both",
        version: 1,
        input: z.object({}),
        steps: { x: { milestone: plain, timer: { afterMs: 1 }, children: { workflow: parcel, input: () => ({ parcel: "a" }) } } as never },
      }),
    ).toThrow(/a step is one of an adapter step, a timer, an event wait or a child step, not timer and children/);
  });

  test("the registration keeps the child's kind and version, the failure policy and the bound", () => {
    const order = parent().children("ship", { milestone: words, workflow: parcel, input: () => ({ parcel: "a" }), onChildFailure: "collect" });
    expect(order.steps[0]!.wait).toEqual({ room: "children", registered: { room: "children", workflow: { kind: "parcel", version: 2 }, onChildFailure: "collect", maxChildren: 100 } });
  });
});

describe("the request, worked out in the worker", () => {
  const order = parent().children("ship", {
    milestone: words,
    workflow: parcel,
    each: (c) => c.input.parcels,
    input: (_c, name) => ({ parcel: name }),
    maxChildren: 3,
    overrides: (_c, _name, index) => (index === 1 ? { priority: 9 } : {}),
  });
  const run = (input: unknown) => order.steps[0]!.run(ctx(input) as never);

  test("one child per element, in order, with the child's version pinned and overrides kept", async () => {
    expect(await run({ parcels: ["a", "b"] })).toEqual({
      kind: "wait",
      wait: { room: "children", request: { workflow: { kind: "parcel", version: 2 }, onChildFailure: "fail", children: [{ input: { parcel: "a" } }, { input: { parcel: "b" }, priority: 9 }] } },
    });
  });

  test("without a list, one child", async () => {
    const single = parent().children("ship", { milestone: words, workflow: parcel, input: () => ({ parcel: "only" }) });
    expect(await childrenRequestOf({ workflow: parcel as WorkflowDefinition, input: () => ({ parcel: "only" }) }, ctx({}))).toMatchObject({ children: [{ input: { parcel: "only" } }] });
    expect(single.steps[0]!.wait?.room).toBe("children");
  });

  test("past the bound, empty, or a bad input: refused before anything is sent, naming what is wrong", async () => {
    await expect(run({ parcels: ["a", "b", "c", "d"] })).rejects.toThrow(/returned 4 elements, past this step's fan-out bound of 3/);
    await expect(run({ parcels: [] })).rejects.toThrow(/empty list/);
    await expect(run({ parcels: ["a", ""] })).rejects.toThrow(/children\[1\]: the input does not match parcel@2's input schema: input\.parcel:/);
  });
});
