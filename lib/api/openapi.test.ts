/**
 * The OpenAPI document is joined from each audience's and resource's path objects: a path may
 * gather its operations from several of them, and an operation described twice is refused
 * rather than one description silently replacing the other.
 */
import { describe, expect, test } from "vitest";
import { joinPaths, openApiDocument } from "./openapi";

const operation = (operationId: string) => ({ operationId, responses: { "200": { description: "ok" } } });

describe("joinPaths", () => {
  test("gathers one path's operations from several groups", () => {
    expect(joinPaths({ "/a": { post: operation("create") } }, { "/a": { get: operation("list") }, "/b": { get: operation("read") } })).toEqual({
      "/a": { post: operation("create"), get: operation("list") },
      "/b": { get: operation("read") },
    });
  });

  test("refuses a method of a path described twice", () => {
    expect(() => joinPaths({ "/a": { get: operation("list") } }, { "/a": { get: operation("listAgain") } })).toThrow("get /a is described twice");
  });
});

test("the document keeps the public POST and the engineer GET of /api/requests side by side", () => {
  const document = openApiDocument() as unknown as { paths: Record<string, Record<string, { operationId: string }>> };
  expect(document.paths["/api/requests"]).toMatchObject({ post: { operationId: "createRequest" }, get: { operationId: "listRequests" } });
});
