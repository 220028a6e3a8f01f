/**
 * Input validation speaks in words for the standard formats: a request input or event payload
 * whose field is not an e-mail address, a URL, a UUID or a date-time is refused with "must be an
 * e-mail address" (…), never with a regex; and Ajv knows every format zod emits, so compiling a
 * schema never warns "unknown format … ignored".
 */
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { z } from "zod";
import { issuesOf, validatorFor } from "./json-schema";

const warnings: unknown[][] = [];
beforeEach(() => {
  warnings.length = 0;
  for (const level of ["warn", "log", "error"] as const) vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void warnings.push(args));
});
afterEach(() => vi.restoreAllMocks());

const issuesFor = (key: string, schema: z.ZodType, value: unknown) => {
  const validate = validatorFor(key, z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>);
  return validate(value) ? [] : issuesOf(validate.errors);
};

test("standard formats are refused in words, one issue per field, and valid values pass", () => {
  const schema = z.object({ email: z.email(), site: z.url(), id: z.uuid(), at: z.iso.datetime(), day: z.iso.date(), phone: z.e164(), code: z.string().startsWith("FL-"), token: z.jwt() });
  expect(issuesFor("formats-1", schema, { email: "ada-at-example", site: "not a url", id: "42", at: "yesterday", day: "2026-02-30", phone: "555", code: "XX-1", token: "nope" })).toEqual([
    { path: "email", message: "must be an e-mail address" },
    { path: "site", message: "must be a URL" },
    { path: "id", message: "must be a UUID" },
    { path: "at", message: "must be a date and time in ISO 8601 (e.g. 2026-12-02T09:30:00Z)" },
    { path: "day", message: "must be a date in ISO 8601 (YYYY-MM-DD)" },
    { path: "phone", message: "must be a phone number in international form (E.164, e.g. +14155550123)" },
    { path: "code", message: 'must start with "FL-"' },
    { path: "token", message: "must be a JSON Web Token" },
  ]);
  expect(
    issuesFor("formats-1", schema, {
      email: "ada@example.com",
      site: "https://example.com/x",
      id: "0195f2c4-7a3b-7cde-8f01-23456789abcd",
      at: "2026-12-02T09:30:00Z",
      day: "2026-12-02",
      phone: "+14155550123",
      code: "FL-1",
      token: "a.b.c",
    }),
  ).toEqual([]);
  expect(warnings).toEqual([]);
});

test("every string format zod emits compiles without an unknown-format warning, and no refusal shows a regex", () => {
  const schema = z.object({
    a: z.guid(), b: z.iso.duration(), c: z.ipv4(), d: z.ipv6(), e: z.cidrv4(), f: z.cidrv6(), g: z.base64(), h: z.base64url(), i: z.nanoid(),
    j: z.cuid(), k: z.cuid2(), l: z.ulid(), m: z.emoji(), n: z.hostname(), o: z.hex(), p: z.hash("sha256"), q: z.string().endsWith(".pdf"),
    r: z.string().includes("@"), s: z.string().lowercase(), t: z.xid(), u: z.ksuid(), v: z.mac(),
  });
  const issues = issuesFor("formats-2", schema, Object.fromEntries("abcdefghijklmnopqrstuv".split("").map((field) => [field, "??? NOT IT ???"])));
  expect(warnings).toEqual([]);
  expect(issues.map((issue) => issue.path)).toEqual("abcdefghijklmnopqrstuv".split(""));
  for (const issue of issues) expect(issue.message, issue.path).not.toMatch(/pattern|\^|\$|\\/);
  expect(issues.find((issue) => issue.path === "q")?.message).toBe('must end with ".pdf"');
  expect(issues.find((issue) => issue.path === "p")?.message).toBe("must be a SHA-256 hash in hex");
});

test("a format this server has never heard of is left to its pattern, without a warning", () => {
  const validate = validatorFor("formats-3", { type: "object", properties: { x: { type: "string", format: "martian-date", pattern: "^M\\d+$" } } });
  expect(validate({ x: "M42" })).toBe(true);
  expect(validate({ x: "42" })).toBe(false);
  expect(issuesOf(validate.errors)).toEqual([{ path: "x", message: "must be a valid martian-date" }]);
  expect(warnings).toEqual([]);
});
