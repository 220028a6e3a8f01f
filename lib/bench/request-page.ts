/**
 * The request's page at its largest: one request of 200 steps and 2,000 attempts (10 per step:
 * nine whose lease expired, each with its recovery decision, then one with a receipt; a fencing
 * rejection and a late observation per step), written into the dashboard's seeded history and
 * read as the page reads it: readRequestPage (eight statements), shaped by the API's schema and
 * serialised, as GET /api/requests/{id}/timeline answers it. The browser's render of that answer
 * is measured by e2e/request-page.spec.ts.
 */
import type pg from "pg";
import { requestTimelineSchema } from "@/lib/api/contract/engineer/request-page";
import { readRequestPage } from "@/lib/requests/page/read";
import { percentile, round } from "./stats";

export const BIG_REQUEST_ID = "00000000-0000-4000-8000-000000000201";
/** A version-4-shaped uuid derived from a text expression, so the API's uuid check takes it. */
const uid = (text: string): string => `(left(md5(${text}), 12) || '4' || substr(md5(${text}), 14, 3) || '8' || substr(md5(${text}), 18, 15))::uuid`;
const STEPS = 200;
const ATTEMPTS_PER_STEP = 10;

/** Writes the big request once (its fixed id says whether it is there); set-based, a few statements. */
export async function ensureBigRequest(pool: pg.Pool): Promise<void> {
  const { rowCount } = await pool.query("SELECT 1 FROM workflow WHERE id = $1::uuid", [BIG_REQUEST_ID]);
  if (rowCount) return;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO step_class (name, lease_ttl_ms, renew_every_ms, attempt_deadline_ms, grace_ms) VALUES ('pure', 5000, 1000, 60000, 1000) ON CONFLICT DO NOTHING`,
    );
    await client.query(
      `INSERT INTO worker_session (id, host, pid, transport) VALUES ('00000000-0000-4000-8000-0000000000aa', 'bench-big', 1, 'direct') ON CONFLICT DO NOTHING`,
    );
    await client.query(
      `INSERT INTO workflow (id, kind, input, input_digest, requester, tracking_token, status, steps_remaining, created_at, updated_at)
       VALUES ($1::uuid, 'bench-big', '{"n": 200}', md5('big'), 'bench', 'bench-big-request-' || md5('big2'), 'completed', 0, now() - interval '2 hours', now())`,
      [BIG_REQUEST_ID],
    );
    // Step s starts at created + 30 s * s; attempt a of it runs 2 s from start + 3 s * a.
    await client.query(
      `INSERT INTO step (id, workflow_id, name, position, adapter, operation, step_class, input_digest, state, fencing_term, attempt_budget,
                         attempts_started, created_at, updated_at, completed_at)
       SELECT ${uid("'big2-step' || s")}, $1::uuid, 'step-' || lpad(s::text, 3, '0'), s, 'idempotent', 'noop', 'pure', md5('big'), 'completed', $2::int, $2::int, $2::int,
              now() - interval '2 hours' + s * interval '30 seconds', now(), now() - interval '2 hours' + s * interval '30 seconds' + interval '30 seconds'
       FROM generate_series(0, $3::int - 1) s`,
      [BIG_REQUEST_ID, ATTEMPTS_PER_STEP, STEPS],
    );
    await client.query(
      `INSERT INTO step_dependency (step_id, depends_on_step_id) SELECT ${uid("'big2-step' || s")}, ${uid("'big2-step' || (s - 1)")} FROM generate_series(1, $1::int - 1) s`,
      [STEPS],
    );
    await client.query(
      `INSERT INTO attempt (id, step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, request_identity, input_digest, checkpoint, deadline_at,
                            created_at, invocation_began_at, response_observed_at, ended_at, outcome, outcome_reason, end_reason, policy_version, expires_at)
       SELECT ${uid("'big2-attempt' || s || '-' || a")}, ${uid("'big2-step' || s")}, $1::uuid, a, 1, '00000000-0000-4000-8000-0000000000aa',
              CASE WHEN a = 1 THEN 'execute' ELSE 'retry_same_identity' END::attempt_mode, 'big-' || s, md5('big'),
              CASE WHEN a = $2::int THEN 'receipt_committed' ELSE 'invocation_began' END::attempt_checkpoint, t + interval '1 minute',
              t, t + interval '500 ms', CASE WHEN a = $2::int THEN t + interval '1500 ms' END, t + interval '2 seconds',
              CASE WHEN a = $2::int THEN 'effect' ELSE 'lease_lost' END::attempt_outcome, CASE WHEN a = $2::int THEN NULL ELSE 'lease expired' END,
              CASE WHEN a = $2::int THEN 'receipt' ELSE 'expired' END::lease_end_reason, 1, t + interval '2 seconds'
       FROM generate_series(0, $3::int - 1) s, generate_series(1, $2::int) a,
            LATERAL (SELECT now() - interval '2 hours' + s * interval '30 seconds' + (a - 1) * interval '3 seconds' AS t) x`,
      [BIG_REQUEST_ID, ATTEMPTS_PER_STEP, STEPS],
    );
    await client.query(
      `INSERT INTO recovery_decision (step_id, attempt_id, fencing_term, epoch, trigger, category, evidence, observed_expires_at, decided_at, decided_by)
       SELECT ${uid("'big2-step' || s")}, ${uid("'big2-attempt' || s || '-' || a")}, a, 1, 'lease_expired', 'retry_same_key',
              '{"checkpoint": "invocation_began", "decision": {"category": "retry_same_key", "nextMode": "retry_same_identity"}}',
              t + interval '2 seconds', t + interval '2100 ms', 'bench'
       FROM generate_series(0, $2::int - 1) s, generate_series(1, $1::int - 1) a,
            LATERAL (SELECT now() - interval '2 hours' + s * interval '30 seconds' + (a - 1) * interval '3 seconds' AS t) x`,
      [ATTEMPTS_PER_STEP, STEPS],
    );
    await client.query(
      `WITH r AS (
         INSERT INTO receipt (workflow_id, step_id, attempt_id, input_digest, request_identity, external_reference, observed_result, verification_method, fencing_term, epoch, created_at)
         SELECT $1::uuid, ${uid("'big2-step' || s")}, ${uid("'big2-attempt' || s || '-' || $2::int")}, md5('big'), 'big-' || s, 'ext-' || s, '{"ok": true}', 'idempotent_replay', $2::int, 1,
                now() - interval '2 hours' + s * interval '30 seconds' + ($2::int - 1) * interval '3 seconds' + interval '1600 ms'
         FROM generate_series(0, $3::int - 1) s
         RETURNING id, step_id)
       INSERT INTO receipt_step (step_id, receipt_id) SELECT step_id, id FROM r`,
      [BIG_REQUEST_ID, ATTEMPTS_PER_STEP, STEPS],
    );
    await client.query(
      `INSERT INTO late_observation (step_id, attempt_id, fencing_term, epoch, operation, request_identity, external_reference, result, at)
       SELECT ${uid("'big2-step' || s")}, ${uid("'big2-attempt' || s || '-1'")}, 1, 1, 'commit_receipt', 'big-' || s, 'ext-' || s, '{"ok": true}',
              now() - interval '2 hours' + s * interval '30 seconds' + interval '4 seconds'
       FROM generate_series(0, $1::int - 1) s`,
      [STEPS],
    );
    await client.query(
      `INSERT INTO fencing_rejection (step_id, operation, presented_term, presented_epoch, presented_owner, current_term, current_epoch, reason, at)
       SELECT ${uid("'big2-step' || s")}, 'commit_receipt', 1, 1, '00000000-0000-4000-8000-0000000000aa', 2, 1, 'superseded',
              now() - interval '2 hours' + s * interval '30 seconds' + interval '4 seconds'
       FROM generate_series(0, $1::int - 1) s`,
      [STEPS],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

export type RequestPageFigures = { readonly steps: number; readonly attempts: number; readonly bytes: number; readonly readP50: number; readonly readP95: number; readonly answerP50: number; readonly answerP95: number; readonly samples: number };

/** Times the page's read of the big request, and the read plus the API's shaping and serialising, sequentially on a warm pool. */
export async function measureRequestPage(pool: pg.Pool, samples: number): Promise<RequestPageFigures> {
  await ensureBigRequest(pool);
  for (let i = 0; i < 2; i += 1) await readRequestPage(pool, BIG_REQUEST_ID);
  const reads: number[] = [];
  const answers: number[] = [];
  let bytes = 0;
  let attempts = 0;
  let steps = 0;
  for (let i = 0; i < samples; i += 1) {
    const startedAt = performance.now();
    const page = await readRequestPage(pool, BIG_REQUEST_ID);
    reads.push(performance.now() - startedAt);
    const body = JSON.stringify(requestTimelineSchema.parse(page));
    answers.push(performance.now() - startedAt);
    bytes = body.length;
    steps = page.steps.length;
    attempts = page.steps.reduce((n, s) => n + s.attempts.length, 0);
  }
  return {
    steps,
    attempts,
    bytes,
    readP50: round(percentile(reads, 50), 1),
    readP95: round(percentile(reads, 95), 1),
    answerP50: round(percentile(answers, 50), 1),
    answerP95: round(percentile(answers, 95), 1),
    samples,
  };
}

export type BulkFigures = { readonly requests: number; readonly previewMs: number; readonly startMs: number; readonly runMs: number; readonly perSecond: number };

/**
 * A bulk cancel of `count` active requests, filtered by an app of their own: the preview, the
 * start (the snapshot), and the runner's work to the end, each request audited as from its page.
 * Writes `count` requests of kind bench-bulk into the seeded database each run (then cancelled).
 */
export async function measureBulkCancel(pool: pg.Pool, count: number): Promise<BulkFigures> {
  const { previewBulk, resumeBulkAction, startBulk } = await import("@/lib/requests/bulk/bulk");
  const app = `bench-bulk-${Date.now()}`;
  await pool.query(
    `INSERT INTO step_class (name, lease_ttl_ms, renew_every_ms, attempt_deadline_ms, grace_ms) VALUES ('pure', 5000, 1000, 60000, 1000) ON CONFLICT DO NOTHING`,
  );
  await pool.query(
    `WITH w AS (
       INSERT INTO workflow (kind, input, input_digest, requester, tracking_token, steps_remaining)
       SELECT 'bench-bulk', '{}', md5('bulk'), $1::text, $1::text || '-' || g || '-' || md5(random()::text), 2 FROM generate_series(1, $2::int) g
       RETURNING id)
     INSERT INTO step (workflow_id, name, position, adapter, operation, step_class, input_digest, state, attempt_budget)
     SELECT w.id, 'step-' || p, p, 'idempotent', 'noop', 'pure', md5('bulk'), CASE WHEN p = 0 THEN 'ready' ELSE 'blocked' END::step_state, 3
     FROM w, generate_series(0, 1) p`,
    [app, count],
  );
  const filter = { app, status: "active" as const };
  let startedAt = performance.now();
  const preview = await previewBulk(pool, filter);
  const previewMs = performance.now() - startedAt;
  if (preview.count !== count) throw new Error(`bulk preview counted ${preview.count}, expected ${count}`);
  startedAt = performance.now();
  const { id } = await startBulk(pool, { action: "cancel", filter, expectedCount: count, reason: "bench", actor: "bench", clientKey: app });
  const startMs = performance.now() - startedAt;
  startedAt = performance.now();
  const ended = await resumeBulkAction(pool, id);
  const runMs = performance.now() - startedAt;
  if (ended !== count) throw new Error(`bulk runner ended ${ended} of ${count}`);
  return { requests: count, previewMs: round(previewMs, 1), startMs: round(startMs, 1), runMs: round(runMs, 0), perSecond: round((count / runMs) * 1000, 0) };
}
