/**
 * The lease-authority guard, written once. A fenced write is accepted only while the lease it
 * presents (kept on its attempt's row) is the one that governs the step: same step and fencing term, owned by the presenting
 * session, open (not ended), unexpired on the database clock, of the current epoch, and its
 * workflow still active. Each fenced statement interpolates `holdsAuthority` into its WHERE
 * clause when its module loads, so every statement's text stays constant and is prepared once
 * per connection; `refusalCases` explains a refusal with the same clauses, in the order a
 * refusal is named (a lease that is both ended and of an old epoch is reported as ended).
 *
 * Whether a workflow that is no longer active (cancelled, failed, completed) refuses the write,
 * decided per statement. Every one refuses it, except for a step that undoes another while its
 * request is being undone (`cancelling`, `failing`: lib/compensation):
 *
 * | statement (file)                              | why an inactive workflow refuses it                 |
 * | --------------------------------------------- | --------------------------------------------------- |
 * | the four checkpoints (checkpoint.ts)          | a cancel is observed at the next checkpoint (SPEC)  |
 * | commit receipt: commitReceipts (receipt.ts)   | recovery still reconciles an observed effect; the   |
 * |                                               | receipt locks its workflow row, so a cancel that    |
 * |                                               | commits while it waits is seen (receipt-cancel test)|
 * | renew (lease.ts)                              | the refusal fires the handler's abort signal        |
 * | release (lease.ts)                            | a released step is ready, and nothing claims a step |
 * |                                               | of an inactive workflow; refused, its lease expires |
 * |                                               | and recovery ends the step from evidence            |
 * | acquire permit (permit.ts)                    | no capacity for a call that must not start          |
 * | report failure: failAttempt (recovery.ts)     | recovery decides at expiry, from the same evidence  |
 *
 * A refused write matches no row; its caller records the refusal (lib/engine/rejection.ts),
 * except a renewal, which records its own `renewal_refused` event.
 */
import type { RenewalRefusalReason } from "../vocabulary";

export type AuthorityTerms = {
  /** Alias of the row carrying the lease (its attempt's) that the statement reads or updates. */
  readonly lease: string;
  /** SQL expressions for what the writer presents. */
  readonly owner: string;
  readonly step: string;
  readonly term: string;
};

/** The guard: true only while the presented lease holds authority over its step. */
export const holdsAuthority = ({ lease, owner, step, term }: AuthorityTerms): string => `${lease}.step_id = ${step}
    AND ${lease}.fencing_term = ${term}
    AND ${lease}.owner_session_id = ${owner}
    AND ${lease}.ended_at IS NULL
    AND ${lease}.expires_at > now()
    AND ${lease}.epoch = fl_current_epoch()
    AND EXISTS (SELECT 1 FROM workflow w WHERE w.id = ${lease}.workflow_id AND ${permitsStep("w", `${lease}.step_id`)})`;

/**
 * Whether the workflow (alias `workflow`) lets step `stepId` write: an active one lets every step;
 * one being undone (cancelling, failing) only the steps that undo another (lib/compensation).
 */
export const permitsStep = (workflow: string, stepId: string): string =>
  `(${workflow}.status = 'active' OR (${workflow}.status IN ('cancelling', 'failing')
      AND EXISTS (SELECT 1 FROM step u WHERE u.id = ${stepId} AND u.undoes_step_id IS NOT NULL)))`;

const reason = (word: RenewalRefusalReason): string => `'${word}'`;

export type RefusalTerms = {
  /** Alias of the presented lease, outer-joined: NULL when no lease has that term. */
  readonly lease: string;
  /** Aliases of the step and of its workflow. */
  readonly stepRow: string;
  readonly workflowRow: string;
  readonly owner: string;
  readonly term: string;
};

/**
 * The WHEN branches of a CASE naming why `holdsAuthority` refuses the presented lease; no branch
 * matches while it holds. A statement adds its own further branches (a renewal's policy and
 * deadline) and wraps them in CASE … END.
 */
export const refusalCases = ({ lease, stepRow, workflowRow, owner, term }: RefusalTerms): string => `
    WHEN ${lease}.step_id IS NULL OR ${stepRow}.fencing_term > ${term} THEN ${reason("superseded")}
    WHEN ${lease}.owner_session_id <> ${owner} THEN ${reason("not_owner")}
    WHEN ${lease}.ended_at IS NOT NULL THEN
      CASE ${lease}.end_reason WHEN 'expired' THEN ${reason("expired")} WHEN 'revoked' THEN ${reason("revoked")} ELSE ${reason("lease_ended")} END
    WHEN ${lease}.epoch <> fl_current_epoch() THEN ${reason("epoch_stale")}
    WHEN ${lease}.expires_at <= now() THEN ${reason("expired")}
    WHEN NOT ${permitsStep(workflowRow, `${stepRow}.id`)} THEN ${reason("workflow_inactive")}`;
