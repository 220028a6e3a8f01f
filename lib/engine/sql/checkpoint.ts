/**
 * Checkpoint statements: request identity persisted, invocation began, response observed. Each
 * is one fenced update of the attempt row, which carries the lease: it bumps the lease's
 * checkpoint version (renewals must present it) and moves the attempt forward by exactly one
 * checkpoint. Guarded by the authority guard
 * (./authority.ts) on $1 owner, $2 step, $3 term, and by the attempt's current checkpoint.
 */
import type { NamedSql } from "../db";
import { sqlList, type Checkpoint } from "../vocabulary";
import { holdsAuthority } from "./authority";

const fencedCheckpoint = (name: string, fromCheckpoints: readonly Checkpoint[], attemptSet: string, returning: string, after = ""): NamedSql => ({
  name,
  text: `
WITH authority AS (
  UPDATE attempt l
  SET checkpoint_version = l.checkpoint_version + 1, ${attemptSet}
  WHERE ${holdsAuthority({ lease: "l", owner: "$1", step: "$2", term: "$3" })}
    AND l.checkpoint IN (${sqlList(fromCheckpoints)})
  RETURNING l.step_id, l.checkpoint_version, l.request_identity
)${after}
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
  `checkpoint = 'identity_persisted', adapter_version = $5,
      request_identity = (SELECT coalesce(s.request_identity, $4) FROM step s WHERE s.id = l.step_id)`,
  "au.checkpoint_version, au.request_identity FROM authority au",
  `,
step_identity AS (
  UPDATE step s
  SET request_identity = au.request_identity, updated_at = now()
  FROM authority au
  WHERE s.id = au.step_id AND s.request_identity IS DISTINCT FROM au.request_identity
)`,
);

export const beginInvocation = fencedCheckpoint(
  "fl_checkpoint_invocation",
  ["identity_persisted"],
  "checkpoint = 'invocation_began', invocation_began_at = now()",
  "au.checkpoint_version FROM authority au",
);

/** Records the destination's answer ($4 external reference, $5 result) before the receipt. */
export const observeResponse = fencedCheckpoint(
  "fl_checkpoint_response",
  ["invocation_began"],
  `checkpoint = 'response_observed', response_observed_at = now(), observed_effect = 'present',
      external_reference = $4, observed_result = $5::jsonb`,
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
  `checkpoint = 'response_observed', response_observed_at = now(), observed_effect = 'absent',
      observed_result = $4::jsonb`,
  "au.checkpoint_version FROM authority au",
);
