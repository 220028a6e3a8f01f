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
SELECT l.step_id, l.attempt_id, l.fencing_term, l.epoch, $4, a.request_identity, $5, $6::jsonb
FROM lease l JOIN attempt a ON a.id = l.attempt_id
WHERE l.step_id = $2 AND l.fencing_term = $3 AND l.owner_session_id = $1
RETURNING id`,
};
