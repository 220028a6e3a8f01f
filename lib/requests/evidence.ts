/**
 * What an app may read of its own request's steps: each step's state in the app's words, its
 * receipt (how the outcome was verified, the destination's reference, the observed result) and
 * its open review cases. Only these: no lease, term, owner, attempt or checkpoint, which are the
 * engine's business, and never another app's request (the request is read as its requester's).
 */
import type { Pool } from "pg";
import type { StaffReadable } from "@/lib/db/read-pool-types";
import { readSnapshot } from "@/lib/db/snapshot";
import { run, type NamedSql } from "@/lib/engine/db";
import { requestWithProgressIn } from "./read";
import type { EvidenceVerification, RequestWithSteps, StepEvidence, StepEvidenceStatus } from "./types";

/** Steps of request $1, when requester $2 is null (staff) or made it, with their receipt and open review cases, in order. */
const readStepEvidenceSql: NamedSql = {
  name: "fl_read_step_evidence",
  text: `
SELECT s.name, s.position, s.state::text AS state,
       r.verification_method::text AS verification_method, r.external_reference, r.observed_result, r.created_at AS receipt_at,
       coalesce((SELECT json_agg(json_build_object('id', c.id, 'reason', c.reason,
                                                   'openedAt', to_char(c.opened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                                   'reviewBy', to_char(c.review_by AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                                 ORDER BY c.opened_at, c.id)
                   FROM review_case c WHERE c.step_id = s.id AND c.status = 'open'), '[]'::json) AS open_review_cases
  FROM step s
  LEFT JOIN receipt_step rs ON rs.step_id = s.id
  LEFT JOIN receipt r ON r.id = rs.receipt_id
 WHERE s.workflow_id = $1
   AND EXISTS (SELECT 1 FROM workflow w WHERE w.id = $1 AND ($2::text IS NULL OR w.requester = $2))
 ORDER BY s.position`,
};

type Row = {
  name: string;
  position: number;
  state: string;
  verification_method: EvidenceVerification | null;
  external_reference: string | null;
  observed_result: unknown;
  receipt_at: Date | null;
  open_review_cases: StepEvidence["openReviewCases"];
};

/** The engine's step states, in the app's words: nothing about leases. Exhaustive. */
const STATUS_OF_STATE: Readonly<Record<string, StepEvidenceStatus>> = {
  blocked: "pending",
  ready: "pending",
  leased: "in_progress",
  waiting: "in_progress",
  completed: "completed",
  completed_without_effect: "completed_without_effect",
  indeterminate: "needs_review",
  failed: "failed",
  rejected: "failed",
  cancelled: "cancelled",
  superseded: "superseded",
};

const statusOf = (state: string): StepEvidenceStatus => {
  const status = STATUS_OF_STATE[state];
  if (!status) throw new Error(`no app word for step state ${state}`);
  return status;
};

/** The steps of request `id` with their evidence; none unless `requester` (null: staff) made it. */
export async function readStepEvidence(db: StaffReadable, id: string, requester: string | null): Promise<StepEvidence[]> {
  const rows = await run<Row>(db, readStepEvidenceSql, [id, requester]);
  return rows.map((row) => ({
    name: row.name,
    position: row.position,
    status: statusOf(row.state),
    receipt:
      row.verification_method === null
        ? null
        : { verificationMethod: row.verification_method, externalReference: row.external_reference, observedResult: row.observed_result ?? null, at: row.receipt_at!.toISOString() },
    openReviewCases: row.open_review_cases,
  }));
}

/** Request `id` of `requester` with its progress and its steps' evidence; NotFoundError for another's. */
export async function readRequestWithSteps(pool: Pool, id: string, requester: string | null): Promise<RequestWithSteps> {
  // One snapshot: the request's status, its progress and its steps' receipts of one moment.
  return readSnapshot(pool, async (snapshot) => {
    // The request is read as its requester's first: another app's id is not found, and reads no step.
    const request = await requestWithProgressIn(snapshot, id, requester);
    return { ...request, steps: await readStepEvidence(snapshot, id, requester) };
  });
}
