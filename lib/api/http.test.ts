import { describe, expect, test } from "vitest";
import { z } from "zod";
import { cursorField, encodeCursor } from "./cursor";
import { parseJsonBody, readParams, readQuery } from "./http";
import { HttpProblem } from "./problems";

const bytes = (text: string) => new TextEncoder().encode(text);

function refusal(run: () => unknown): HttpProblem {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("U+0000, which PostgreSQL cannot store, is refused at the edge with where it was", () => {
  test("in a body's string, at any depth, or in a key", () => {
    const deep = refusal(() => parseJsonBody(bytes('{"payload":{"lines":["ok","a\\u0000b"]}}'), z.unknown()));
    expect(deep.code).toBe("invalid-request");
    expect(deep.message).toBe("body: payload.lines.1: holds a NUL character (U+0000), which cannot be stored");
    // The issue's path has the schema's shape, as a field's other refusals do.
    expect(deep.extra.issues).toEqual([{ path: "payload.lines.1", message: "holds a NUL character (U+0000), which cannot be stored" }]);
    // A field whose own rule refuses the character says so in its words.
    const ruled = refusal(() => parseJsonBody(bytes('{"key":"a\\u0000"}'), z.object({ key: z.string().regex(/^[^\u0000-\u001f]*$/, "must not hold control characters") })));
    expect(ruled.message).toBe("body: key: must not hold control characters");
    expect(refusal(() => parseJsonBody(bytes('{"a\\u0000":1}'), z.unknown())).message).toContain("body: a\u0000");
    expect(refusal(() => parseJsonBody(bytes('"\\u0000"'), z.unknown())).message).toBe("body: holds a NUL character (U+0000), which cannot be stored");
    // The six characters \u0000 as text are not a NUL.
    expect(parseJsonBody(bytes('{"a":"\\\\u0000"}'), z.unknown())).toEqual({ a: "\\u0000" });
  });

  test("in a query value", () => {
    const refused = refusal(() => readQuery(new Request("http://x/api?q=ok&cursor=a%00"), z.object({})));
    expect(refused.code).toBe("invalid-request");
    expect(refused.message).toBe("query: cursor: holds a NUL character (U+0000), which cannot be stored");
  });

  test("in a path parameter, which is a not-found", async () => {
    await expect(readParams(Promise.resolve({ token: "a\u0000" }), z.object({ token: z.string() }))).rejects.toMatchObject({ code: "not-found" });
    await expect(readParams(Promise.resolve({ token: "abc" }), z.object({ token: z.string() }))).resolves.toEqual({ token: "abc" });
  });
});

test("a cursor whose key holds U+0000 is not one this API issued", () => {
  const field = z.object({ cursor: cursorField(z.tuple([z.string()])) });
  expect(field.safeParse({ cursor: encodeCursor(["a"]) }).success).toBe(true);
  expect(field.safeParse({ cursor: encodeCursor(["a\u0000"]) }).error?.issues[0]?.message).toBe("cursor is not one this API issued");
});
