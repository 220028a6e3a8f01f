/**
 * A review case has at most one holder, and every change of holder is one guarded statement: a
 * person acting on a version they no longer see is refused with who holds the case and since
 * when, two people taking at once leave one holder, and each change is in the audit log. The
 * queue filters by holder and by overdue, and lists overdue cases first.
 */
import type { Pool } from "pg";
import { describe, expect } from "vitest";
import { createAccount } from "@/lib/auth/accounts";
import { dbTest as test } from "@/lib/db/test-database";
import { InvalidInputError } from "@/lib/engine/errors";
import { ReviewConflictError } from "./errors";
import { changeReviewCaseOwnership, supportColleagues } from "./ownership";
import { listReviewCases } from "./queue";
import { resolveReviewCase } from "./resolve";
import { caseUnderReview } from "./test-support";

const ANN = "ann@staff.test";
const BOB = "bob@staff.test";
const ENGINEER = "eve@staff.test";

const caseRow = async (pool: Pool, caseId: string) =>
  (await pool.query<{ assignee: string | null; assigned_at: Date | null; version: number; status: string }>(
    "SELECT assignee, assigned_at, version, status FROM review_case WHERE id = $1",
    [caseId],
  )).rows[0]!;
const auditOf = async (pool: Pool, caseId: string) =>
  (await pool.query<{ actor: string; action: string; after: { assignee: string | null } }>(
    "SELECT actor, action, after FROM audit_log WHERE subject_type = 'review_case' AND subject_id = $1 ORDER BY id",
    [caseId],
  )).rows;
const refusalOf = (promise: Promise<unknown>) => promise.then(() => null, (error: unknown) => error);

let accounts: Promise<void> | undefined;
/** Ann and Bob hold the support role, Eve only engineer: created once per file. */
const withAccounts = (pool: Pool) =>
  (accounts ??= (async () => {
    await createAccount(pool, { email: ANN, name: "Ann", password: "ann-password-0123", roles: ["support"] }, "test setup");
    await createAccount(pool, { email: BOB, name: "Bob", password: "bob-password-0123", roles: ["support"] }, "test setup");
    await createAccount(pool, { email: ENGINEER, name: "Eve", password: "eve-password-0123", roles: ["engineer"] }, "test setup");
  })());

describe("take", () => {
  test("an unassigned case becomes held by the person, since now on the database clock, and the audit log says so", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const result = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);
    expect(result).toMatchObject({ assignee: ANN, version: review.version + 1, replayed: false });
    const row = await caseRow(db.pool, review.caseId);
    const { rows: [clock] } = await db.pool.query<{ now: Date }>("SELECT now()");
    expect(row).toMatchObject({ assignee: ANN, version: review.version + 1, status: "open" });
    expect(Math.abs(clock!.now.getTime() - row.assigned_at!.getTime())).toBeLessThan(5_000);
    expect(await auditOf(db.pool, review.caseId)).toEqual([{ actor: ANN, action: "review.taken", after: { assignee: ANN, version: review.version + 1 } }]);
  });

  test("taking again what one already holds is a replay: nothing changes, nothing more is audited", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);
    const again = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);
    expect(again).toMatchObject({ assignee: ANN, version: review.version + 1, replayed: true });
    expect(await auditOf(db.pool, review.caseId)).toHaveLength(1);
  });

  test("two people taking the same version at once: one holds it, the other is told who took it and when", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const body = { action: "take", version: review.version } as const;
    const outcomes = await Promise.allSettled([
      changeReviewCaseOwnership(db.pool, review.caseId, body, ANN),
      changeReviewCaseOwnership(db.pool, review.caseId, body, BOB),
    ]);
    const won = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const lost = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const holder = (won[0] as PromiseFulfilledResult<{ assignee: string }>).value.assignee;
    const conflict = (lost[0] as PromiseRejectedResult).reason as ReviewConflictError;
    expect(conflict).toBeInstanceOf(ReviewConflictError);
    expect(conflict.conflict).toBe("already_taken");
    expect(conflict.message).toMatch(new RegExp(`^already taken by ${holder} at \\d{4}-`));
    expect(conflict.details).toMatchObject({ assignee: holder, currentVersion: review.version + 1 });
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({ assignee: holder, version: review.version + 1 });
    expect((await auditOf(db.pool, review.caseId)).map((entry) => entry.actor)).toEqual([holder]);
  });

  test("taking over from a colleague at the version one saw is allowed", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const taken = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);
    const over = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: taken.version }, BOB);
    expect(over).toMatchObject({ assignee: BOB, replayed: false });
  });
});

describe("hand over", () => {
  test("to a support colleague: they hold it; to someone without the support role: refused, nothing changes", async ({ db }) => {
    await withAccounts(db.pool);
    const review = await caseUnderReview(db.pool);
    const taken = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);

    const refusal = await refusalOf(changeReviewCaseOwnership(db.pool, review.caseId, { action: "hand_over", version: taken.version, to: ENGINEER }, ANN));
    expect(refusal).toBeInstanceOf(InvalidInputError);
    expect((refusal as InvalidInputError).issues[0]).toMatchObject({ path: "to" });
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({ assignee: ANN, version: taken.version });

    const handed = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "hand_over", version: taken.version, to: "Bob@Staff.Test" }, ANN);
    expect(handed).toMatchObject({ assignee: BOB, version: taken.version + 1, replayed: false });
    expect((await auditOf(db.pool, review.caseId)).map((entry) => [entry.actor, entry.action, entry.after.assignee])).toEqual([
      [ANN, "review.taken", ANN],
      [ANN, "review.handed_over", BOB],
    ]);
    expect((await supportColleagues(db.pool)).map((colleague) => colleague.email)).toEqual([ANN, BOB]);
  });

  test("at a stale version, after someone else took it: refused with who took it and when", async ({ db }) => {
    await withAccounts(db.pool);
    const review = await caseUnderReview(db.pool);
    const taken = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, BOB);
    const refusal = await refusalOf(changeReviewCaseOwnership(db.pool, review.caseId, { action: "hand_over", version: review.version, to: ANN }, ANN));
    expect(refusal).toBeInstanceOf(ReviewConflictError);
    expect((refusal as ReviewConflictError).conflict).toBe("already_taken");
    expect((refusal as ReviewConflictError).message).toBe(`already taken by ${BOB} at ${taken.assignedAt}; reload the case to see it`);
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({ assignee: BOB, version: taken.version });
  });
});

describe("give back", () => {
  test("the holder gives it back: unassigned again; someone else cannot give back a case they do not hold", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const taken = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);

    const refusal = await refusalOf(changeReviewCaseOwnership(db.pool, review.caseId, { action: "give_back", version: taken.version }, BOB));
    expect((refusal as ReviewConflictError).conflict).toBe("already_taken");
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({ assignee: ANN, version: taken.version });

    const back = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "give_back", version: taken.version }, ANN);
    expect(back).toMatchObject({ assignee: null, assignedAt: null, version: taken.version + 1, replayed: false });
    expect(await caseRow(db.pool, review.caseId)).toMatchObject({ assignee: null, assigned_at: null });
  });

  test("a stale version on an unassigned case is refused as changed, not as taken", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const taken = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);
    await changeReviewCaseOwnership(db.pool, review.caseId, { action: "give_back", version: taken.version }, ANN);
    const refusal = await refusalOf(changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, BOB));
    expect((refusal as ReviewConflictError).conflict).toBe("stale_version");
  });
});

describe("with resolutions", () => {
  test("a resolution prepared before someone took the case is refused with who took it; at the current version anyone may resolve", async ({ db }) => {
    const review = await caseUnderReview(db.pool);
    const taken = await changeReviewCaseOwnership(db.pool, review.caseId, { action: "take", version: review.version }, ANN);
    const body = { resolution: "confirm_not_delivered", note: "not in their console" } as const;

    const refusal = await refusalOf(resolveReviewCase(db.pool, review.caseId, { ...body, version: review.version }, BOB));
    expect((refusal as ReviewConflictError).conflict).toBe("already_taken");
    expect((refusal as ReviewConflictError).details).toMatchObject({ assignee: ANN, assignedAt: taken.assignedAt });

    expect(await resolveReviewCase(db.pool, review.caseId, { ...body, version: taken.version }, BOB)).toMatchObject({ resolvedBy: BOB, replayed: false });
    const late = await refusalOf(changeReviewCaseOwnership(db.pool, review.caseId, { action: "give_back", version: taken.version }, ANN));
    expect((late as ReviewConflictError).conflict).toBe("already_resolved");
  });
});

describe("the queue", () => {
  test("filters mine, unassigned and overdue, and lists overdue cases first", async ({ db }) => {
    await db.pool.query("UPDATE review_case SET status = 'resolved', resolution = 'abandon', resolved_by = 'test', resolved_at = now() WHERE status = 'open'");
    const [soon, overdue, mine] = [await caseUnderReview(db.pool), await caseUnderReview(db.pool), await caseUnderReview(db.pool)];
    await db.pool.query("UPDATE review_case SET review_by = now() - interval '1 minute' WHERE id = $1", [overdue.caseId]);
    await changeReviewCaseOwnership(db.pool, mine.caseId, { action: "take", version: mine.version }, ANN);

    const ids = async (filters: { holder?: "mine" | "unassigned"; overdue?: boolean }, viewer = ANN) =>
      (await listReviewCases(db.pool, { status: "open", limit: 50, ...filters }, viewer)).items.map((item) => item.id);
    expect(await ids({})).toEqual([overdue.caseId, soon.caseId, mine.caseId]);
    expect(await ids({ holder: "mine" })).toEqual([mine.caseId]);
    expect(await ids({ holder: "mine" }, BOB)).toEqual([]);
    expect(await ids({ holder: "unassigned" })).toEqual([overdue.caseId, soon.caseId]);
    expect(await ids({ overdue: true })).toEqual([overdue.caseId]);

    const [held] = (await listReviewCases(db.pool, { status: "open", limit: 50, holder: "mine" }, ANN)).items;
    expect(held).toMatchObject({ assignee: ANN, overdue: false });
    expect(held!.assignedAt).toMatch(/^\d{4}-/);
  });
});
