/**
 * Every operation in the OpenAPI document survives hostile input. fast-check drives each one's
 * exported route handler with malformed requests — wrong types, missing and extra fields,
 * oversized bodies, odd unicode, negative and overflowing numbers, bad cursors, wrong content
 * types, and forged, expired or revoked sessions and worker tokens — and for every input checks
 * that the answer is never a 5xx, that a refusal is problem+json saying what was wrong under a
 * listed problem code, and that a refused request wrote no row in any table.
 */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, expect } from "vitest";
import { openApiDocument } from "@/lib/api/openapi";
import { signedIn } from "@/lib/auth/test-support";
import { createWorkerToken, revokeWorkerToken } from "@/lib/auth/worker-tokens";
import { pool } from "@/lib/db/pool";
import { dbTest as test } from "@/lib/db/test-database";
import { createSingleStepWorkflows } from "@/lib/engine/test-support";
import { encodeCursor } from "./cursor";
import { MAX_BODY_BYTES } from "./http";
import { PROBLEMS, problemTypeOf, type ProblemCode } from "./problems";

const RUNS_PER_OPERATION = 40;
const API_ROOT = path.join(process.cwd(), "app");

type Handler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Operation = { method: string; template: string; file: string; routeParams: (concrete: string[]) => Record<string, string>; pathParams: string[]; queryNames: string[]; bodyNames: string[] };

afterAll(async () => {
  await pool().end();
});

/** The route file serving an OpenAPI path, walking app/ as Next does: a literal segment, else a [param] folder. */
function routeFor(template: string): { file: string; params: string[] } {
  let directory = API_ROOT;
  const params: string[] = [];
  for (const segment of template.split("/").filter(Boolean)) {
    const literal = segment.startsWith("{") ? null : path.join(directory, segment);
    if (literal && existsSync(literal)) {
      directory = literal;
      continue;
    }
    const dynamic = readdirSync(directory).find((entry) => /^\[\w+\]$/.test(entry));
    if (!dynamic) throw new Error(`no route for ${template} at ${directory}`);
    params.push(dynamic.slice(1, -1));
    directory = path.join(directory, dynamic);
  }
  return { file: path.join(directory, "route.ts"), params };
}

type SchemaObject = { properties?: Record<string, unknown>; $ref?: string; anyOf?: SchemaObject[]; oneOf?: SchemaObject[] };

function operations(): Operation[] {
  const document = openApiDocument() as unknown as {
    paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: SchemaObject }> } }>>;
    components?: { schemas?: Record<string, SchemaObject> };
  };
  const resolve = (schema: SchemaObject | undefined): SchemaObject | undefined =>
    schema?.$ref ? document.components?.schemas?.[schema.$ref.split("/").at(-1)!] : schema;
  const propertyNames = (schema: SchemaObject | undefined): string[] => {
    const resolved = resolve(schema);
    if (!resolved) return [];
    return [...Object.keys(resolved.properties ?? {}), ...[...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])].flatMap(propertyNames)];
  };
  return Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const { file, params } = routeFor(template);
      const pathParams = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
      // Literal segments that the route serves through a [param] folder (the worker protocol's operations).
      const literalParams = params.length > pathParams.length ? template.split("/").slice(-1) : [];
      return {
        method: method.toUpperCase(),
        template,
        file,
        pathParams,
        routeParams: (concrete) => Object.fromEntries(params.map((name, index) => [name, [...literalParams, ...concrete][index] ?? ""])),
        queryNames: (operation.parameters ?? []).filter((parameter) => parameter.in === "query").map((parameter) => parameter.name),
        bodyNames: [...new Set(propertyNames(operation.requestBody?.content["application/json"]?.schema))],
      };
    }),
  );
}

// ---- hostile values --------------------------------------------------------------------------

const oddStrings = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("", " ", "-1", "0", "-0", "1e309", "NaN", "Infinity", "9223372036854775808", "99999999999999999999999", "../../etc/passwd", "%00", "\u0000", "\uFEFF", "\u202Eevil", "𝕏".repeat(200), "null", "true", "[]", "{}", "<script>", "' OR 1=1 --"),
  fc.uuid().map((uuid) => uuid.toUpperCase()),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
);
const badCursors = fc.oneof(
  oddStrings,
  fc.jsonValue().map((value) => encodeCursor([JSON.stringify(value)])),
  fc.constantFrom(encodeCursor(["yesterday", "x"]), encodeCursor([1, 2, 3]), encodeCursor([]), "a".repeat(600), Buffer.from("{not json").toString("base64url")),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, -0.5, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, [], {}, "", "x".repeat(10_000)),
  oddStrings,
  fc.integer(),
  fc.double(),
  fc.jsonValue({ maxDepth: 3 }),
  fc.uuid(),
);

const credentials = fc.constantFrom("none", "forged-cookie", "expired-session", "staff", "forged-token", "revoked-token", "worker");

type Input = {
  pathValues: string[];
  query: Record<string, string>;
  body: { contentType: string | null; text: string } | null;
  credential: string;
  clientIp: string;
};

function inputs(operation: Operation): fc.Arbitrary<Input> {
  const names = [...operation.queryNames, "cursor", "limit", "before", "from", "to"];
  const query = fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })), fc.oneof(oddStrings, badCursors), { maxKeys: 4 });
  const jsonBody = fc.oneof(
    // Declared fields with wrong values, missing ones, and extras.
    fc.dictionary(fc.oneof(fc.constantFrom(...(operation.bodyNames.length ? operation.bodyNames : ["x"])), fc.string({ maxLength: 10 })), hostileValue, { maxKeys: 6 }).map((value) => JSON.stringify(value)),
    hostileValue.map((value) => JSON.stringify(value)),
    fc.constantFrom("{", "{\"a\":", "\u0000", "[1,2", "'single'", "{\"__proto__\":{\"admin\":true}}", `{"x":"${"y".repeat(MAX_BODY_BYTES + 10)}"}`, "{}", ""),
  );
  const body = fc.option(
    fc.record({ contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", null), text: jsonBody }),
    { nil: null, freq: 8 },
  );
  return fc.record({
    pathValues: fc.array(oddStrings, { minLength: operation.pathParams.length, maxLength: operation.pathParams.length }),
    query,
    body: operation.method === "GET" ? fc.constant(null) : body,
    credential: credentials,
    clientIp: fc.ipV4(),
  });
}

// ---- the property ----------------------------------------------------------------------------

test("every operation in the OpenAPI document answers hostile input with a 4xx problem, and writes nothing", { timeout: 600_000 }, async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  delete process.env.FENCELINE_MODE;
  // Something to aim at: a workflow, its step, and sessions in every state.
  await createSingleStepWorkflows(db.pool, 1, { adapter: "pure", operation: "noop", stepClass: "pure" });
  const staff = await signedIn(db.pool, ["support", "engineer", "admin"], "all roles");
  const expired = await signedIn(db.pool, ["support", "engineer", "admin"], "expired");
  const { rows: expiredSessions } = await db.pool.query(
    `UPDATE auth_session SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM auth_user WHERE email = $1) RETURNING *`,
    [expired.email],
  );
  // better-auth deletes an expired session it is shown; put it back so every such input meets one.
  const restoreExpired = () =>
    db.pool.query(
      `INSERT INTO auth_session SELECT * FROM json_populate_recordset(NULL::auth_session, $1::json) ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(expiredSessions)],
    );
  const worker = await createWorkerToken(db.pool, "fuzz-worker", "test setup");
  const revoked = await createWorkerToken(db.pool, "fuzz-revoked", "test setup");
  await revokeWorkerToken(db.pool, revoked.id, "test setup");
  const headersFor: Record<string, Record<string, string>> = {
    none: {},
    "forged-cookie": { cookie: "fenceline.session_token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.c2lnbmF0dXJl" },
    "expired-session": expired.headers,
    staff: staff.headers,
    "forged-token": { authorization: `Bearer ${"A".repeat(43)}` },
    "revoked-token": { authorization: `Bearer ${revoked.token}` },
    worker: { authorization: `Bearer ${worker.token}` },
  };

  const { rows: tables } = await db.pool.query<{ name: string }>(`SELECT quote_ident(relname) AS name FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition AND relname <> '_prisma_migrations' ORDER BY 1`);
  // A function takes at most 100 arguments: one object per 40 tables, joined.
  const chunks = Array.from({ length: Math.ceil(tables.length / 40) }, (_, i) => tables.slice(i * 40, i * 40 + 40));
  const countAll = `SELECT ${chunks.map((chunk) => `jsonb_build_object(${chunk.map((table) => `'${table.name}', (SELECT count(*) FROM ${table.name})`).join(", ")})`).join(" || ")} AS counts`;
  const counts = async () => (await db.pool.query<{ counts: Record<string, number> }>(countAll)).rows[0]!.counts;

  const figures = { operations: 0, inputs: 0, accepted: 0, serverErrors: 0, rowsWrittenByRefusals: 0, expiredSessionsCleanedUp: 0 };
  for (const operation of operations()) {
    const module = (await import(/* @vite-ignore */ operation.file)) as Record<string, Handler>;
    const handler = module[operation.method];
    expect(handler, `${operation.method} ${operation.template} is exported by ${operation.file}`).toBeTypeOf("function");
    figures.operations += 1;
    await fc.assert(
      fc.asyncProperty(inputs(operation), async (input) => {
        let url = `http://127.0.0.1:3000${operation.template}`;
        operation.pathParams.forEach((name, index) => (url = url.replace(`{${name}}`, encodeURIComponent(input.pathValues[index]!))));
        const search = new URLSearchParams(input.query).toString();
        const headers: Record<string, string> = { ...headersFor[input.credential]!, "x-forwarded-for": input.clientIp };
        if (input.body?.contentType) headers["content-type"] = input.body.contentType;
        const request = new Request(search ? `${url}?${search}` : url, { method: operation.method, headers, body: input.body ? input.body.text : undefined });

        if (input.credential === "expired-session") await restoreExpired();
        const before = await counts();
        const response = await handler!(request, { params: Promise.resolve(operation.routeParams(input.pathValues)) });
        const after = await counts();
        figures.inputs += 1;

        if (response.status >= 500) figures.serverErrors += 1;
        expect(response.status, `${operation.method} ${operation.template} ${JSON.stringify(input).slice(0, 400)}`).toBeLessThan(500);
        if (response.status < 400) {
          figures.accepted += 1;
          await response.body?.cancel();
          return;
        }
        expect(response.headers.get("content-type")).toBe("application/problem+json");
        const problem = (await response.json()) as { type: string; code: ProblemCode; status: number; title: string; detail: string };
        expect(problem.status).toBe(response.status);
        expect(PROBLEMS[problem.code]?.status, `${problem.code} is a listed problem code`).toBe(response.status);
        expect(problem.type).toBe(problemTypeOf(problem.code));
        expect(problem.detail.length).toBeGreaterThan(0);
        // The one change a refusal may make: better-auth deleting the expired session it was shown.
        const cleanedUp = input.credential === "expired-session" && after.auth_session === before.auth_session! - 1;
        if (cleanedUp) figures.expiredSessionsCleanedUp += 1;
        const changed = Object.keys(after).filter((table) => after[table] !== before[table] && !(cleanedUp && table === "auth_session"));
        if (changed.length) figures.rowsWrittenByRefusals += 1;
        expect(changed, `${operation.method} ${operation.template} refused (${response.status}) but wrote rows`).toEqual([]);
      }),
      { numRuns: RUNS_PER_OPERATION, seed: 20261129 },
    );
  }
  console.log(`[hostile-input] ${JSON.stringify(figures)}`);
  expect(figures.operations).toBe(operations().length);
  expect(figures.serverErrors).toBe(0);
  expect(figures.rowsWrittenByRefusals).toBe(0);
});
