import type { NamedSql } from "../db";
import { refusalCases } from "./authority";

/**
 * Records fencing rejections for writes that matched no row. For each ($2 step, $3 presented
 * term, $4 operation, $5 external reference, $6 result) of owner $1 it explains the refusal with
 * the authority guard's own clauses (./authority.ts), keeps the payload as a late observation, and
 * links the two. Rows the guard finds no reason to refuse (a checkpoint written out of order by a
 * holder that still has authority) are not rejections and are returned with a NULL reason.
 */
export const recordRejections: NamedSql = {
  name: "fl_record_rejections",
  text: `
WITH request AS (
  SELECT * FROM unnest($2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::jsonb[])
    WITH ORDINALITY AS r(step_id, fencing_term, operation, external_reference, result, n)
),
verdict AS (
  SELECT r.*,
         (CASE ${refusalCases({ lease: "l", stepRow: "s", workflowRow: "w", owner: "$1", term: "r.fencing_term" })}
          END)::rejection_reason AS reason,
         s.fencing_term AS current_term, fl_current_epoch() AS current_epoch,
         coalesce(l.epoch, fl_current_epoch()) AS presented_epoch, l.id AS attempt_id, l.request_identity
  FROM request r
  -- Outer joins keep one row per request: a step that does not exist has no lease with the
  -- presented term, which the guard names superseded (with no current term).
  LEFT JOIN step s ON s.id = r.step_id
  LEFT JOIN workflow w ON w.id = s.workflow_id
  -- The attempt row carries the lease.
  LEFT JOIN attempt l ON l.step_id = r.step_id AND l.fencing_term = r.fencing_term
),
observation AS (
  INSERT INTO late_observation (step_id, attempt_id, fencing_term, epoch, operation, request_identity,
                                external_reference, result)
  SELECT step_id, attempt_id, fencing_term, presented_epoch, operation, request_identity, external_reference, result
  FROM verdict WHERE reason IS NOT NULL
  ORDER BY n
  RETURNING id, step_id, fencing_term, operation
),
rejection AS (
  INSERT INTO fencing_rejection (step_id, operation, presented_term, presented_epoch, presented_owner,
                                 current_term, current_epoch, reason, late_observation_id)
  SELECT v.step_id, v.operation, v.fencing_term, v.presented_epoch, $1, v.current_term, v.current_epoch,
         v.reason, o.id
  FROM verdict v
  JOIN observation o ON o.step_id = v.step_id AND o.fencing_term = v.fencing_term AND o.operation = v.operation
  WHERE v.reason IS NOT NULL
)
SELECT step_id, fencing_term, reason, current_term FROM verdict ORDER BY n`,
};
