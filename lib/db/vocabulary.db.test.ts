/**
 * One vocabulary: every list in lib/engine/vocabulary.ts that PostgreSQL stores as an enum holds
 * exactly that enum's labels, in the enum's order (the order is the checkpoints' sequence and the
 * views' order), and every enum of the engine's schema has its list. A migration that adds, drops
 * or reorders a label without the code, or the reverse, fails here. It lives in lib/db, which
 * knows the whole schema: one enum is the console's (staff roles), which the engine must not import.
 */
import { expect } from "vitest";
import { STAFF_ROLES } from "@/lib/auth/roles";
import {
  ATTEMPT_MODES,
  ATTEMPT_OUTCOMES,
  CHECKPOINTS,
  EFFECT_OBSERVATIONS,
  LEASE_END_REASONS,
  LEASE_EVENT_KINDS,
  PERMIT_STATES,
  RECOVERY_CATEGORIES,
  RECOVERY_TRIGGERS,
  REJECTION_REASONS,
  REPETITION_POLICIES,
  REVIEW_RESOLUTIONS,
  REVIEW_STATUSES,
  STEP_STATES,
  VERIFICATION_METHODS,
  WORKFLOW_STATUSES,
} from "@/lib/engine/vocabulary";
import { CHILD_WAIT_STATES } from "@/lib/children/vocabulary";
import { EVENT_WAIT_STATES } from "@/lib/events/vocabulary";
import { TIMER_STATES } from "@/lib/timers/vocabulary";
import { dbTest as test } from "./test-database";

/** Each enum type of the schema and the list the code derives its words from. */
const LISTS: Record<string, readonly string[]> = {
  attempt_checkpoint: CHECKPOINTS,
  attempt_mode: ATTEMPT_MODES,
  attempt_outcome: ATTEMPT_OUTCOMES,
  child_wait_state: CHILD_WAIT_STATES,
  event_wait_state: EVENT_WAIT_STATES,
  effect_observation: EFFECT_OBSERVATIONS,
  lease_end_reason: LEASE_END_REASONS,
  lease_event_kind: LEASE_EVENT_KINDS,
  permit_state: PERMIT_STATES,
  recovery_category: RECOVERY_CATEGORIES,
  recovery_trigger: RECOVERY_TRIGGERS,
  rejection_reason: REJECTION_REASONS,
  repetition_policy: REPETITION_POLICIES,
  review_resolution: REVIEW_RESOLUTIONS,
  review_status: REVIEW_STATUSES,
  // The console's, not the engine's, but stored the same way.
  staff_role_name: STAFF_ROLES,
  step_state: STEP_STATES,
  timer_state: TIMER_STATES,
  verification_method: VERIFICATION_METHODS,
  workflow_status: WORKFLOW_STATUSES,
};

test("every enum of the schema has its list, with the same labels in the same order", async ({ db }) => {
  const { rows } = await db.pool.query<{ name: string; labels: string[] }>(
    `SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
     FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
     WHERE t.typnamespace = current_schema()::regnamespace
     GROUP BY t.typname`,
  );
  expect(Object.fromEntries(rows.map((row) => [row.name, row.labels]))).toEqual(LISTS);
});
