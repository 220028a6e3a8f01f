/**
 * Who holds a review case. An open case is unassigned or held by one support person since a
 * moment on the database clock:
 *
 *   take       the person asking becomes the holder (from nobody, or from a colleague)
 *   hand_over  a colleague with the support role becomes the holder
 *   give_back  the holder lets go; the case is unassigned again
 *
 * Each is one guarded statement (case open, version as the person saw it, the change not already
 * made; giving back also needs the holder to be the one asking), bumping the case's version as a
 * resolution does, so a resolution prepared before a change of holder is refused too. The audit
 * entry commits in the same transaction. Asking for what is already so changes nothing and
 * answers `replayed`; any other mismatch is a ReviewConflictError that says who holds the case
 * and since when.
 */
import type { Pool } from "pg";
import type { OwnershipBody, OwnershipResult } from "@/lib/api/contract/support";
import { appendAudit, type AuditAction } from "@/lib/audit/log";
import { inTransaction, run, type NamedSql, type Queryable } from "@/lib/engine/db";
import { InvalidInputError, NotFoundError } from "@/lib/engine/errors";
import type { ReviewStatus } from "@/lib/engine/vocabulary";
import { ReviewConflictError } from "./errors";

const heldColumns = `c.id, c.assignee, c.assigned_at, c.version`;

/** Take: case $1 at version $2 becomes held by $3, unless $3 holds it already. */
export const takeCase: NamedSql = {
  name: "fl_review_take",
  text: `
UPDATE review_case c
SET assignee = $3, assigned_at = now(), version = c.version + 1
WHERE c.id = $1 AND c.status = 'open' AND c.version = $2 AND c.assignee IS DISTINCT FROM $3
RETURNING ${heldColumns}`,
};

/**
 * Hand over: case $1 at version $2 becomes held by $3, which must name a staff account with the
 * support role (matched as accounts are stored, in lower case), unless that colleague holds it already.
 */
export const handOverCase: NamedSql = {
  name: "fl_review_hand_over",
  text: `
UPDATE review_case c
SET assignee = colleague.email, assigned_at = now(), version = c.version + 1
FROM (SELECT u.email FROM auth_user u JOIN staff_role r ON r.user_id = u.id AND r.role = 'support' WHERE u.email = lower($3)) colleague
WHERE c.id = $1 AND c.status = 'open' AND c.version = $2 AND c.assignee IS DISTINCT FROM colleague.email
RETURNING ${heldColumns}`,
};

/** Give back: case $1 at version $2, held by $3, becomes unassigned. */
export const giveBackCase: NamedSql = {
  name: "fl_review_give_back",
  text: `
UPDATE review_case c
SET assignee = NULL, assigned_at = NULL, version = c.version + 1
WHERE c.id = $1 AND c.status = 'open' AND c.version = $2 AND c.assignee = $3
RETURNING ${heldColumns}`,
};

/** Why a change of holder of case $1 matched no row: the case as it is now, and whether $2 is a support account. */
export const explainOwnershipRefusal: NamedSql = {
  name: "fl_review_explain_ownership",
  text: `
SELECT c.status, c.version, c.assignee, c.assigned_at, c.resolution, c.resolved_by, c.resolved_at,
       EXISTS (SELECT 1 FROM auth_user u JOIN staff_role r ON r.user_id = u.id AND r.role = 'support' WHERE u.email = lower($2)) AS colleague_is_support
FROM review_case c WHERE c.id = $1`,
};

/** The staff accounts a case can be handed to: every holder of the support role, by email. */
export const listSupportColleagues: NamedSql = {
  name: "fl_review_support_colleagues",
  text: `
SELECT u.email, u.name FROM auth_user u JOIN staff_role r ON r.user_id = u.id AND r.role = 'support'
ORDER BY u.email LIMIT 500`,
};

type HeldRow = { id: string; assignee: string | null; assigned_at: Date | null; version: number };

const AUDIT_ACTIONS = { take: "review.taken", hand_over: "review.handed_over", give_back: "review.given_back" } as const satisfies Record<OwnershipBody["action"], AuditAction>;

const resultOf = (caseId: string, row: Omit<HeldRow, "id">, replayed: boolean): OwnershipResult => ({
  caseId,
  assignee: row.assignee,
  assignedAt: row.assigned_at?.toISOString() ?? null,
  version: row.version,
  replayed,
});

/** The holder the body asks for: the actor, the colleague, or nobody. */
const wantedHolder = (body: OwnershipBody, actor: string): string | null =>
  body.action === "take" ? actor : body.action === "hand_over" ? body.to.toLowerCase() : null;

export async function changeReviewCaseOwnership(pool: Pool, caseId: string, body: OwnershipBody, actor: string): Promise<OwnershipResult> {
  const applied = await inTransaction(pool, async (client) => {
    const statement = body.action === "take" ? takeCase : body.action === "hand_over" ? handOverCase : giveBackCase;
    const [row] = await run<HeldRow>(client, statement, [caseId, body.version, body.action === "hand_over" ? body.to : actor]);
    if (!row) return null;
    await appendAudit(client, {
      actor,
      action: AUDIT_ACTIONS[body.action],
      subjectType: "review_case",
      subjectId: caseId,
      before: { version: body.version },
      after: { assignee: row.assignee, version: row.version },
    });
    return row;
  });
  if (applied) return resultOf(caseId, applied, false);
  return explainRefusal(pool, caseId, body, actor);
}

type RefusalRow = {
  status: ReviewStatus;
  version: number;
  assignee: string | null;
  assigned_at: Date | null;
  resolution: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  colleague_is_support: boolean;
};

/** The change matched no row: say why, or recognise that the case is already held as asked. */
async function explainRefusal(db: Queryable, caseId: string, body: OwnershipBody, actor: string): Promise<OwnershipResult> {
  const [row] = await run<RefusalRow>(db, explainOwnershipRefusal, [caseId, body.action === "hand_over" ? body.to : ""]);
  if (!row) throw new NotFoundError("review case", caseId);
  const held = { assignee: row.assignee, assignedAt: row.assigned_at?.toISOString() ?? null };
  if (row.status === "resolved") {
    throw new ReviewConflictError(
      "already_resolved",
      `this case was already resolved (${row.resolution?.replaceAll("_", " ")}) by ${row.resolved_by} at ${row.resolved_at?.toISOString()}`,
      { currentVersion: row.version, resolution: row.resolution, resolvedBy: row.resolved_by, resolvedAt: row.resolved_at?.toISOString() ?? null, ...held },
    );
  }
  if (body.action === "hand_over" && !row.colleague_is_support) {
    throw new InvalidInputError("hand over", [{ path: "to", message: `${body.to} is not a support account: a case can be handed only to a colleague with the support role` }]);
  }
  if (row.assignee === wantedHolder(body, actor)) return resultOf(caseId, row, true);
  if (row.assignee !== null && row.assignee !== actor) {
    throw new ReviewConflictError("already_taken", `already taken by ${row.assignee} at ${held.assignedAt}; reload the case to see it`, { currentVersion: row.version, ...held });
  }
  throw new ReviewConflictError("stale_version", `this case changed since you loaded it (version ${body.version}, now ${row.version}); reload it`, {
    currentVersion: row.version,
    ...held,
  });
}

export type SupportColleague = { readonly email: string; readonly name: string };

export async function supportColleagues(db: Queryable): Promise<SupportColleague[]> {
  return run<SupportColleague>(db, listSupportColleagues, []);
}
