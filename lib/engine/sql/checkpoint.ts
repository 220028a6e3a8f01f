/**
 * Checkpoint statements: request identity persisted, invocation began, response observed. Each
 * is one fenced write that bumps the lease's checkpoint version (renewals must present it) and
 * moves the attempt forward by exactly one checkpoint. Guarded by the authority guard
 * (./authority.ts) on $1 owner, $2 step, $3 term, and by the attempt's current checkpoint.
 */
import type { NamedSql } from "../db";
import { sqlList, type Checkpoint } from "../vocabulary";
import { holdsAuthority } from "./authority";

const fencedCheckpoint = (name: string, fromCheckpoints: readonly Checkpoint[], attemptUpdate: string, returning: string): NamedSql => ({
  name,
  text: `
WITH authority AS (
  UPDATE lease l
  SET checkpoint_version = l.checkpoint_version + 1
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "$2", term: "$3" })}
    AND EXISTS (SELECT 1 FROM attempt a WHERE a.id = l.attempt_id AND a.checkpoint IN (${sqlList(fromCheckpoints)}))
  RETURNING l.step_id, l.attempt_id, l.checkpoint_version
)${attemptUpdate}
SELECT ${returning}`,
});

/**
 * Persists the step's request identity before any invocation. The identity is stable per step:
 * the first attempt to persist one fixes it ($4 is only a proposal), and every later attempt
 * reuses it. $5 is the adapter version the attempt will call.
 */
export const persistRequestIdentity = fencedCheckpoint(
  "fl_checkpoint_identity",
  ["created"],
  `,
step_identity AS (
  UPDATE step s
  SET request_identity = coalesce(s.request_identity, $4), updated_at = now()
  FROM authority au
  WHERE s.id = au.step_id
  RETURNING s.id, s.request_identity
),
attempt_identity AS (
  UPDATE attempt a
  SET checkpoint = 'identity_persisted', request_identity = si.request_identity, adapter_version = $5
  FROM authority au JOIN step_identity si ON si.id = au.step_id
  WHERE a.id = au.attempt_id
  RETURNING a.request_identity
)`,
  "au.checkpoint_version, ai.request_identity FROM authority au, attempt_identity ai",
);

export const beginInvocation = fencedCheckpoint(
  "fl_checkpoint_invocation",
  ["identity_persisted"],
  `,
attempt_began AS (
  UPDATE attempt a
  SET checkpoint = 'invocation_began', invocation_began_at = now()
  FROM authority au
  WHERE a.id = au.attempt_id
)`,
  "au.checkpoint_version FROM authority au",
);

/** Records the destination's answer ($4 external reference, $5 result) before the receipt. */
export const observeResponse = fencedCheckpoint(
  "fl_checkpoint_response",
  ["invocation_began"],
  `,
attempt_observed AS (
  UPDATE attempt a
  SET checkpoint = 'response_observed', response_observed_at = now(), observed_effect = 'present',
      external_reference = $4, observed_result = $5::jsonb
  FROM authority au
  WHERE a.id = au.attempt_id
)`,
  "au.checkpoint_version FROM authority au",
);

/**
 * Records that the destination answered that nothing was applied ($4 what it said): a definite
 * refusal of the call, or a status query that found no trace of the request identity (which a
 * status-query attempt makes right after persisting the identity, without invoking anything).
 */
export const observeEffectAbsent = fencedCheckpoint(
  "fl_checkpoint_effect_absent",
  ["identity_persisted", "invocation_began"],
  `,
attempt_observed AS (
  UPDATE attempt a
  SET checkpoint = 'response_observed', response_observed_at = now(), observed_effect = 'absent',
      observed_result = $4::jsonb
  FROM authority au
  WHERE a.id = au.attempt_id
)`,
  "au.checkpoint_version FROM authority au",
);
