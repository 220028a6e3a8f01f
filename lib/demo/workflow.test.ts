/**
 * The delivery workflow as defined: its input schema says what is wrong with bad input, field by
 * field, and its steps run prepare → reserve → deliver → notify, deliver on the adapter the
 * request chooses.
 */
import { describe, expect, test } from "vitest";
import { demoAdapters } from "./adapters";
import { deliveryRequestSchema, deliveryWorkflow } from "./workflow";

const messagesOf = (input: unknown): string[] => {
  const parsed = deliveryRequestSchema.safeParse(input);
  expect(parsed.success).toBe(false);
  return parsed.success ? [] : parsed.error.issues.map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message));
};

describe("delivery request", () => {
  test("defaults deliverVia to idempotent and trims the recipient", () => {
    expect(deliveryRequestSchema.parse({ recipient: "  ana@example.test ", message: "hi" })).toEqual({
      recipient: "ana@example.test",
      message: "hi",
      deliverVia: "idempotent",
    });
  });

  test.each([
    [null, "must be an object"],
    [{ message: "hi" }, "recipient: required"],
    [{ recipient: 7, message: "hi" }, "recipient: must be a string"],
    [{ recipient: "   ", message: "hi" }, "recipient: must not be empty"],
    [{ recipient: "a", message: "x".repeat(2_001) }, "message: must be at most 2000 characters"],
    [{ recipient: "a", message: "hi", deliverVia: "email" }, 'deliverVia: must be one of idempotent, queryable, opaque, got "email"'],
    [{ recipient: "a", message: "hi", priority: 1 }, 'unknown field "priority"'],
  ])("rejects %j with a message naming the field", (input, message) => {
    expect(messagesOf(input)).toEqual([message]);
  });

  test("lists every offending field at once", () => {
    expect(messagesOf({ recipient: "", deliverVia: "fax" })).toEqual([
      "recipient: must not be empty",
      "message: required",
      'deliverVia: must be one of idempotent, queryable, opaque, got "fax"',
    ]);
  });
});

test("runs prepare → reserve → deliver → notify, deliver on the adapter the request chooses", () => {
  const delivery = deliveryWorkflow(demoAdapters("http://127.0.0.1:9"));
  expect(delivery).toMatchObject({ kind: "delivery", version: 1, title: "Delivery to {recipient}" });
  expect(delivery.steps.map((step) => [step.name, step.class, step.dependsOn])).toEqual([
    ["prepare", "pure", []],
    ["reserve", "external", ["prepare"]],
    ["deliver", "external", ["reserve"]],
    ["notify", "external", ["deliver"]],
  ]);
  const [, reserve, deliver, notify] = delivery.steps;
  expect(reserve!.adapter).toMatchObject({ name: "fenced" });
  expect(deliver!.adapter).toMatchObject({ field: "deliverVia", options: { idempotent: { name: "idempotent" }, queryable: { name: "queryable" }, opaque: { name: "opaque" } } });
  expect(notify!.adapter).toMatchObject({ name: "idempotent" });
});
