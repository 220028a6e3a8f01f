/**
 * The support API end to end through its route handlers: the queue lists open cases oldest first
 * with filters and keyset pages, a case shows its evidence, and a resolution on a case someone
 * else already resolved is a 409 problem that says who and when, as is taking a case someone else
 * took first.
 */
import { afterAll, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { pool } from "@/lib/db/pool";
import { GET as listRoute } from "@/app/api/review/route";
import { GET as caseRoute } from "@/app/api/review/[caseId]/route";
import { POST as resolveRoute } from "@/app/api/review/[caseId]/resolution/route";
import { POST as ownershipRoute } from "@/app/api/review/[caseId]/ownership/route";
import { signedIn, type SignedIn } from "@/lib/auth/test-support";
import { caseUnderReview, type CaseUnderReview } from "./test-support";

let cases: CaseUnderReview[] = [];
let support: SignedIn;
let grace: SignedIn;

afterAll(async () => {
  await pool().end();
});

const list = async (query: string) => {
  const response = await listRoute(new Request(`http://test/api/review${query}`, { headers: support.headers }), { params: Promise.resolve({}) });
  return { status: response.status, body: await response.json() };
};

const resolve = (caseId: string, body: unknown, as: SignedIn = support) =>
  resolveRoute(
    new Request(`http://test/api/review/${caseId}/resolution`, {
      method: "POST",
      headers: { "content-type": "application/json", ...as.headers },
      body: JSON.stringify(body),
    }),
    { params: Promise.resolve({ caseId }) },
  );

test("the queue: open cases oldest first, filtered, in keyset pages", async ({ db }) => {
  process.env.DATABASE_URL = db.url;
  support = await signedIn(db.pool, ["support"]);
  grace = await signedIn(db.pool, ["support"], "grace");
  cases = [];
  for (const recipient of ["a@example.test", "b@example.test", "c@example.test"]) cases.push(await caseUnderReview(db.pool, recipient));

  const first = await list("?limit=2");
  expect(first.status).toBe(200);
  expect(first.body.items.map((c: { id: string }) => c.id)).toEqual([cases[0]!.caseId, cases[1]!.caseId]);
  expect(first.body.items[0]).toMatchObject({ status: "open", adapter: "opaque", stepName: "deliver", attemptCount: 1, statusQuery: false, idempotencyKeys: false });
  const second = await list(`?limit=2&cursor=${first.body.nextCursor}`);
  expect(second.body.items.map((c: { id: string }) => c.id)).toEqual([cases[2]!.caseId]);
  expect(second.body.nextCursor).toBeNull();

  expect((await list("?adapter=queryable")).body.items).toEqual([]);
  expect((await list("?q=neither%20deduplicates")).body.items).toHaveLength(3);
  expect((await list("?q=100%25_")).body.items).toHaveLength(0);
  const reference = first.body.items[1].reference as string;
  expect((await list(`?q=${reference}`)).body.items.map((c: { id: string }) => c.id)).toEqual([cases[1]!.caseId]);
  expect((await list("?status=resolved")).body.items).toEqual([]);

  const bad = await list("?cursor=nonsense");
  expect(bad.status).toBe(400);
});

test("a case with its evidence; an unknown or malformed id is a 404 problem", async () => {
  const response = await caseRoute(new Request("http://test", { headers: support.headers }), { params: Promise.resolve({ caseId: cases[0]!.caseId }) });
  expect(response.status).toBe(200);
  const detail = await response.json();
  expect(detail.case.version).toBe(cases[0]!.version);
  expect(detail.customerSees.headline.label).toBe("Delivery status needs review");

  for (const caseId of ["00000000-0000-4000-8000-000000000000", "nope"]) {
    const missing = await caseRoute(new Request("http://test", { headers: support.headers }), { params: Promise.resolve({ caseId }) });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toBe("application/problem+json");
  }
});

test("resolving: 200 for the first, replay for the same, 409 with who and when for another decision", async () => {
  const { caseId, version } = cases[1]!;
  const first = await resolve(caseId, { resolution: "confirm_delivered", version, externalReference: "opq_42", note: "" }, grace);
  expect(first.status).toBe(200);
  expect(await first.json()).toMatchObject({ resolvedBy: grace.email, replayed: false });

  const replay = await resolve(caseId, { resolution: "confirm_delivered", version, externalReference: "opq_42", note: "" }, grace);
  expect(await replay.json()).toMatchObject({ replayed: true });

  const stale = await resolve(caseId, { resolution: "abandon", version, customerReason: "sorry", note: "dup" });
  expect(stale.status).toBe(409);
  expect(stale.headers.get("content-type")).toBe("application/problem+json");
  expect(await stale.json()).toMatchObject({ code: "already-resolved", title: "Already resolved", resolvedBy: grace.email, resolution: "confirm_delivered" });

  const invalid = await resolve(cases[2]!.caseId, { resolution: "abandon", version: cases[2]!.version, note: "no reason for the customer" });
  expect(invalid.status).toBe(400);
  const body = await invalid.json();
  expect(body.issues.map((i: { path: string }) => i.path)).toContain("customerReason");

  expect((await list("?status=resolved")).body.items.map((c: { id: string }) => c.id)).toEqual([caseId]);
});

test("only support resolves: no session is a 401, an engineer a 403, engineer+support may; nothing changes on a refusal", async ({ db }) => {
  const { caseId, version } = cases[2]!;
  const body = { resolution: "confirm_not_delivered", version, note: "checked the destination's log" };
  const anonymous = await resolveRoute(
    new Request(`http://test/api/review/${caseId}/resolution`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    { params: Promise.resolve({ caseId }) },
  );
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get("content-type")).toBe("application/problem+json");
  const engineer = await signedIn(db.pool, ["engineer"]);
  const refused = await resolve(caseId, body, engineer);
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({ detail: expect.stringContaining("support") });
  expect((await list("?status=open")).body.items.map((c: { id: string }) => c.id)).toContain(caseId);

  // A forged cookie is no session at all.
  expect((await resolve(caseId, body, { email: "x", cookie: "fenceline.session_token=forged.sig", headers: { cookie: "fenceline.session_token=forged.sig" } })).status).toBe(401);

  const both = await signedIn(db.pool, ["engineer", "support"]);
  const stale = await resolve(caseId, { ...body, version: version + 1 }, both);
  expect(stale.status).toBe(409);
  expect(await stale.json()).toMatchObject({ type: "urn:fenceline:problem:stale-version", code: "stale-version", title: "Stale version" });
  const accepted = await resolve(caseId, body, both);
  expect(accepted.status).toBe(200);
  expect(await accepted.json()).toMatchObject({ resolvedBy: both.email, replayed: false });
});

test("every resolution leaves one audit entry, written with it: who, what, before and after", async ({ db }) => {
  const { rows } = await db.pool.query(`SELECT actor, action, subject_id, before, after FROM audit_log WHERE action = 'review.resolved' ORDER BY id`);
  expect(rows).toHaveLength(2);
  expect(rows[0]).toMatchObject({
    actor: grace.email,
    subject_id: cases[1]!.caseId,
    before: { status: "open", version: cases[1]!.version },
    after: { status: "resolved", resolution: "confirm_delivered", externalReference: "opq_42" },
  });
  await expect(db.pool.query(`UPDATE audit_log SET actor = 'someone else'`)).rejects.toMatchObject({ code: "23001" });
  await expect(db.pool.query(`DELETE FROM audit_log`)).rejects.toMatchObject({ code: "23001" });
});

test("ownership: take, a stale take is a 409 problem naming who took it, hand over to support only; engineers may not", async ({ db }) => {
  const review = await caseUnderReview(db.pool, "owned@example.test");
  const change = (body: unknown, as: SignedIn = support) =>
    ownershipRoute(
      new Request(`http://test/api/review/${review.caseId}/ownership`, { method: "POST", headers: { "content-type": "application/json", ...as.headers }, body: JSON.stringify(body) }),
      { params: Promise.resolve({ caseId: review.caseId }) },
    );
  const taken = await change({ action: "take", version: review.version });
  expect(taken.status).toBe(200);
  const held = await taken.json();
  expect(held).toMatchObject({ caseId: review.caseId, assignee: support.email, version: review.version + 1, replayed: false });

  const late = await change({ action: "take", version: review.version }, grace);
  expect(late.status).toBe(409);
  expect(late.headers.get("content-type")).toBe("application/problem+json");
  expect(await late.json()).toMatchObject({
    code: "already-taken",
    detail: `already taken by ${support.email} at ${held.assignedAt}; reload the case to see it`,
    assignee: support.email,
    assignedAt: held.assignedAt,
  });

  const engineer = await signedIn(db.pool, ["engineer"]);
  expect((await change({ action: "hand_over", version: held.version, to: engineer.email })).status).toBe(422);
  expect((await change({ action: "give_back", version: held.version }, engineer)).status).toBe(403);
  expect((await change({ action: "hand_over", version: held.version })).status).toBe(400);

  const handed = await change({ action: "hand_over", version: held.version, to: grace.email });
  expect(await handed.json()).toMatchObject({ assignee: grace.email, replayed: false });
  const mine = await listRoute(new Request("http://test/api/review?holder=mine", { headers: grace.headers }), { params: Promise.resolve({}) });
  expect((await mine.json()).items.map((c: { id: string }) => c.id)).toEqual([review.caseId]);
});
