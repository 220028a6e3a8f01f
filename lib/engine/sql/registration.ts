/**
 * Registration statements. A definition is written once and then only read: registering the
 * same name and version again returns the stored row, which the caller compares with what was
 * presented (a different shape is refused by the caller's transaction). Only an adapter's
 * epoch administration URL and its review hint (how support checks it by hand), locations and
 * words rather than promises, follow the latest registration.
 */
import type { NamedSql } from "../db";

/**
 * Adapters ($1 name … $9 epoch admin url, $10 rate per second, $11 rate burst, $12 review check
 * url, $13 review instructions, arrays): inserts new ones, returns every stored row.
 */
export const registerAdapters: NamedSql = {
  name: "fl_register_adapters",
  text: `
INSERT INTO adapter_definition AS d (name, version, external_effect, idempotency_keys, status_query, fence_enforcement,
                                     repetition, timeout_ms, concurrency_limit, epoch_admin_url, rate_per_second, rate_burst,
                                     review_check_url, review_instructions)
SELECT r.name, r.version, true, r.idempotency_keys, r.status_query, r.fence_enforcement, r.repetition, r.timeout_ms,
       r.concurrency_limit, r.epoch_admin_url, r.rate_per_second, r.rate_burst, r.review_check_url, r.review_instructions
FROM unnest($1::text[], $2::text[], $3::boolean[], $4::boolean[], $5::boolean[], $6::repetition_policy[], $7::int[], $8::int[], $9::text[],
            $10::int[], $11::int[], $12::text[], $13::text[])
  AS r(name, version, idempotency_keys, status_query, fence_enforcement, repetition, timeout_ms, concurrency_limit, epoch_admin_url,
       rate_per_second, rate_burst, review_check_url, review_instructions)
ORDER BY r.name, r.version
ON CONFLICT (name, version) DO UPDATE SET epoch_admin_url = excluded.epoch_admin_url,
                                          review_check_url = excluded.review_check_url,
                                          review_instructions = excluded.review_instructions
RETURNING d.name, d.version, d.external_effect, d.idempotency_keys, d.status_query, d.fence_enforcement, d.repetition,
          d.timeout_ms, d.concurrency_limit, d.rate_per_second, d.rate_burst`,
};

/**
 * The rate each destination ($1 adapter, $2 version declaring it, $3 per second, $4 burst; NULL
 * per second: none) is held to from now on: the latest registration of the adapter name decides.
 * Its call-slot ring gets one slot per call a second (slots beyond a lowered rate are unused).
 * Locks the rate rows in name order, as every permit for them does one at a time.
 */
export const declareRates: NamedSql = {
  name: "fl_declare_rates",
  text: `
WITH declared AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) AS r(adapter, version, per_second, burst)
),
dropped AS (
  DELETE FROM adapter_rate a USING declared d WHERE a.adapter = d.adapter AND d.per_second IS NULL
),
kept AS (
  INSERT INTO adapter_rate AS a (adapter, per_second, burst, declared_by)
  SELECT adapter, per_second, burst, version FROM declared WHERE per_second IS NOT NULL ORDER BY adapter
  ON CONFLICT (adapter) DO UPDATE
  SET per_second = excluded.per_second, burst = excluded.burst, declared_by = excluded.declared_by, updated_at = now()
  RETURNING a.adapter, a.per_second
)
INSERT INTO adapter_call_slot (adapter, slot)
SELECT k.adapter, n FROM kept k, generate_series(0, k.per_second - 1) n
ORDER BY 1, 2
ON CONFLICT DO NOTHING`,
};

/**
 * Workflows ($1 kind … $6 steps, $7 limit per key, $8 fairness, $9 default priority, arrays):
 * inserts new ones, returns every stored row.
 */
export const registerWorkflows: NamedSql = {
  name: "fl_register_workflows",
  text: `
INSERT INTO workflow_definition AS d (kind, version, input_schema, title, deadline_ms, steps, limit_per_key, fairness, default_priority)
SELECT * FROM unnest($1::text[], $2::int[], $3::jsonb[], $4::text[], $5::int[], $6::jsonb[], $7::int[], $8::text[], $9::smallint[])
ORDER BY 1, 2
-- A no-op update, so the stored row comes back for comparison and is locked until commit.
ON CONFLICT (kind, version) DO UPDATE SET kind = d.kind
RETURNING d.kind, d.version, d.input_schema, d.title, d.deadline_ms, d.steps, d.limit_per_key, d.fairness, d.default_priority`,
};

/** The step classes among $1 that exist. */
export const existingStepClasses: NamedSql = {
  name: "fl_existing_step_classes",
  text: `SELECT name FROM step_class WHERE name = ANY($1::text[])`,
};

/** Session $1 serves the workflow versions ($2 kinds, $3 versions). */
export const recordServed: NamedSql = {
  name: "fl_record_served",
  text: `
INSERT INTO worker_session_definition (session_id, kind, version)
SELECT $1, kind, version FROM unnest($2::text[], $3::int[]) AS r(kind, version)
ON CONFLICT DO NOTHING`,
};

/** What session $1 registered to serve. */
export const servedBySession: NamedSql = {
  name: "fl_served_by_session",
  text: `SELECT kind, version FROM worker_session_definition WHERE session_id = $1 ORDER BY kind, version`,
};

/** Workflow definition ($1 kind, $2 version), or with $2 null the highest version of the kind. */
export const workflowDefinition: NamedSql = {
  name: "fl_workflow_definition",
  text: `
SELECT kind, version, input_schema, title, deadline_ms, steps, limit_per_key, fairness, default_priority
FROM workflow_definition
WHERE kind = $1 AND ($2::int IS NULL OR version = $2)
ORDER BY version DESC
LIMIT 1`,
};

/** Every registered kind with its versions, for a refusal that names what exists. */
export const registeredKinds: NamedSql = {
  name: "fl_registered_kinds",
  text: `SELECT kind, array_agg(version ORDER BY version) AS versions FROM workflow_definition GROUP BY kind ORDER BY kind`,
};

/**
 * A session counts as serving while it is not stopped and has heartbeat within this long (its
 * heartbeat runs every 2 s by default): an SQL interval literal, for the statements below.
 */
export const SESSION_LIVE_WITHIN = "interval '30 seconds'";

/** How many live sessions serve the workflow version (kind, version) of the row at hand. */
export const liveServersOf = (kind: string, version: string): string => `(
    SELECT count(*)::int FROM worker_session_definition sd JOIN worker_session ws ON ws.id = sd.session_id
    WHERE sd.kind = ${kind} AND sd.version = ${version}
      AND ws.stopped_at IS NULL AND ws.last_heartbeat_at > now() - ${SESSION_LIVE_WITHIN}
  )`;
