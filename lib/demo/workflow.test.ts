/** The delivery request schema: valid input builds the four-step draft, bad input says what is wrong. */
import { describe, expect, test } from "vitest";
import { deliveryWorkflow, InvalidDeliveryRequestError, parseDeliveryRequest } from "./workflow";

const errorOf = (input: unknown): string => {
  try {
    parseDeliveryRequest(input);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidDeliveryRequestError);
    return (error as Error).message;
  }
  throw new Error("the input was accepted");
};

describe("delivery request", () => {
  test("defaults deliverVia to idempotent and trims the recipient", () => {
    expect(parseDeliveryRequest({ recipient: "  ana@example.test ", message: "hi" })).toEqual({
      recipient: "ana@example.test",
      message: "hi",
      deliverVia: "idempotent",
    });
  });

  test.each([
    [null, "invalid delivery request: must be an object"],
    [{ message: "hi" }, "invalid delivery request: recipient: required"],
    [{ recipient: 7, message: "hi" }, "invalid delivery request: recipient: must be a string"],
    [{ recipient: "   ", message: "hi" }, "invalid delivery request: recipient: must not be empty"],
    [{ recipient: "a", message: "x".repeat(2_001) }, "invalid delivery request: message: must be at most 2000 characters"],
    [{ recipient: "a", message: "hi", deliverVia: "email" }, 'invalid delivery request: deliverVia: must be one of idempotent, queryable, opaque, got "email"'],
    [{ recipient: "a", message: "hi", priority: 1 }, 'invalid delivery request: unknown field "priority"'],
  ])("rejects %j with a message naming the field", (input, message) => {
    expect(errorOf(input)).toBe(message);
  });

  test("lists every offending field at once", () => {
    expect(errorOf({ recipient: "", deliverVia: "fax" })).toBe(
      'invalid delivery request: recipient: must not be empty; message: required; deliverVia: must be one of idempotent, queryable, opaque, got "fax"',
    );
  });

  test("builds prepare → reserve → deliver → notify, deliver on the chosen adapter", () => {
    const draft = deliveryWorkflow({ recipient: "ana", message: "hi", deliverVia: "opaque" }, { requester: "test", idempotencyKey: "k1" });
    expect(draft).toMatchObject({ kind: "delivery", requester: "test", idempotencyKey: "k1", input: { recipient: "ana", message: "hi", deliverVia: "opaque" } });
    expect(draft.steps.map((step) => [step.name, step.adapter, step.stepClass, step.dependsOn ?? []])).toEqual([
      ["prepare", "pure", "pure", []],
      ["reserve", "fenced", "external", ["prepare"]],
      ["deliver", "opaque", "external", ["reserve"]],
      ["notify", "idempotent", "external", ["deliver"]],
    ]);
  });
});
