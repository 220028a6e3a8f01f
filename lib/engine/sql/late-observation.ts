import type { NamedSql } from "../db";

/**
 * A worker of session $1 posts what it learned about its own attempt ($2 step, $3 term) after
 * losing authority: $4 operation, $5 external reference, $6 result. It needs no current
 * authority, only to have held that lease; it never changes current state.
 */
export const postLateObservation: NamedSql = {
  name: "fl_post_late_observation",
  text: `
INSERT INTO late_observation (step_id, attempt_id, fencing_term, epoch, operation, request_identity,
                              external_reference, result)
SELECT a.step_id, a.id, a.fencing_term, a.epoch, $4, a.request_identity, $5, $6::jsonb
FROM attempt a
WHERE a.step_id = $2 AND a.fencing_term = $3 AND a.owner_session_id = $1
RETURNING id`,
};
