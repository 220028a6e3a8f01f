/**
 * Each metric's value is computed from a known set of events written with fixed database times,
 * so every figure below can be checked by hand; an event outside the range is never counted, and
 * the two families stay separate series.
 */
import { describe, expect } from "vitest";
import { dbTest as test } from "@/lib/db/test-database";
import { createSingleStepWorkflows } from "@/lib/engine/test-support";
import { metricsQuery } from "@/lib/api/contract/engineer/metrics";
import { listStepsQuery } from "@/lib/api/contract/engineer/steps";
import { listSteps } from "@/lib/steps/list";
import { readTotals, renderExposition } from "./prometheus";
import { readMetrics, resolveRange } from "./series";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const SESSION = "11111111-1111-4111-8111-111111111111";

let seeded = false;

/** The known history: one step, two terms, and the evidence around them. */
async function seed(pool: import("pg").Pool): Promise<void> {
  if (seeded) return;
  seeded = true;
  const [stepId] = await createSingleStepWorkflows(pool, 1, { adapter: "opaque", operation: "deliver", stepClass: "external" });
  const { rows } = await pool.query<{ workflow_id: string }>("SELECT workflow_id FROM step WHERE id = $1", [stepId]);
  const workflowId = rows[0]!.workflow_id;
  const attempt = async (term: number, began: number | null, reference: string | null, observed: number | null) => {
    const result = await pool.query<{ id: string }>(
      `INSERT INTO attempt (step_id, workflow_id, fencing_term, epoch, owner_session_id, mode, input_digest, deadline_at, created_at,
                            invocation_began_at, external_reference, response_observed_at, policy_version, expires_at, ended_at, end_reason)
       VALUES ($1, $2, $3, 1, $4, 'execute', 'd', $5, $5, $6, $7, $8, 1, $5::timestamptz + interval '1 hour', $5::timestamptz + interval '1 hour', 'expired')
       RETURNING id`,
      [stepId, workflowId, term, SESSION, at(0), began === null ? null : at(began), reference, observed === null ? null : at(observed)],
    );
    return result.rows[0]!.id;
  };
  const first = await attempt(1, 360, "ref-1", 180);
  const second = await attempt(2, null, null, null);
  // Each attempt carries its lease; the lease's start is its `acquired` event and an end with a
  // receipt its `released` one.
  const lease = (attemptId: string, leasedAt: number, expiresAt: number, end: string) =>
    pool.query(`UPDATE lease SET leased_at = $2, expires_at = $3, ended_at = $3, end_reason = $4 WHERE attempt_id = $1`, [
      attemptId, at(leasedAt), at(expiresAt), end,
    ]);
  await lease(first, 240, 270, "expired");
  await lease(second, 100, 130, "receipt"); // released at 130
  await lease(await attempt(3, null, null, null), -60, -30, "expired"); // before the range
  await lease(await attempt(4, null, null, null), 30, 45, "expired");
  const event = (kind: string, seconds: number) =>
    pool.query(`INSERT INTO lease_event (step_id, fencing_term, epoch, owner_session_id, kind, at) VALUES ($1, 1, 1, $2, $3, $4)`, [
      stepId, SESSION, kind, at(seconds),
    ]);
  for (const s of [40, 41, 42]) await event("renewed", s);
  await event("renewal_refused", 100);
  await event("expiry_observed", 300); // lease 1: leased at 240, expired at 270 → age 60 s, lag 30 s
  await event("revoked", 200);

  const decision = (category: string, trigger: string, seconds: number, evidence: object) =>
    pool.query(
      `INSERT INTO recovery_decision (step_id, attempt_id, fencing_term, epoch, trigger, category, evidence, observed_expires_at, decided_at, decided_by)
       VALUES ($1, $2, 1, 1, $3, $4, $5, $6, $6, 'test')`,
      [stepId, first, trigger, category, JSON.stringify(evidence), at(seconds)],
    );
  await decision("review", "lease_expired", 300, { checkpoint: "invocation_began", observedEffect: null, receiptExists: false, adapter: { repetition: "prohibited" } });
  await decision("retry_same_key", "attempt_failed", 360, { checkpoint: "identity_persisted", observedEffect: null, receiptExists: false, adapter: { repetition: "idempotency_protected" } });

  for (const s of [310, 312]) {
    await pool.query(
      `INSERT INTO fencing_rejection (step_id, operation, presented_term, presented_epoch, presented_owner, current_term, current_epoch, reason, at)
       VALUES ($1, 'observe_response', 1, 1, $2, 2, 1, 'expired', $3)`,
      [stepId, SESSION, at(s)],
    );
  }
  await pool.query(
    `INSERT INTO late_observation (step_id, attempt_id, fencing_term, epoch, operation, external_reference, at) VALUES ($1, $2, 1, 1, 'observe_response', 'ref-2', $3)`,
    [stepId, first, at(320)],
  );
  // Invocation began at 360 (first attempt); receipt at 420 → 60 s to receipt. Same reference as the late observation.
  await pool.query(
    `INSERT INTO receipt (workflow_id, step_id, attempt_id, input_digest, external_reference, verification_method, fencing_term, epoch, created_at)
     VALUES ($1, $2, $3, 'd', 'ref-2', 'status_query', 2, 1, $4)`,
    [workflowId, stepId, second, at(420)],
  );
  await pool.query(
    `INSERT INTO review_case (step_id, workflow_id, reason, evidence, review_by, opened_at) VALUES ($1, $2, 'outcome unknown', '{}', $3, $3)`,
    [stepId, workflowId, at(300)],
  );
  // An earlier case, opened at 60 and resolved by a person at 480: 120 s after the first invocation.
  await pool.query(
    `INSERT INTO review_case (step_id, workflow_id, reason, evidence, review_by, opened_at, status, resolution, resolved_by, resolved_at)
     VALUES ($1, $2, 'outcome unknown', '{}', $3, $3, 'resolved', 'confirm_delivered', 'support@test', $4)`,
    [stepId, workflowId, at(60), at(480)],
  );
}

describe("metric series", () => {
  test("count each event in its bucket and leave out what falls outside the range", async ({ db }) => {
    await seed(db.pool);
    const metrics = await readMetrics(db.pool, resolveRange(metricsQuery.parse({ from: at(0), to: at(600), bucket: "1m" })));
    expect(metrics.bucketSeconds).toBe(60);
    const series = (id: string) => [...metrics.churn, ...metrics.uncertainty].find((m) => m.id === id)!;
    const column = (id: string, key: string) => series(id).points.map((p) => p.values[key]);

    expect(metrics.churn.map((m) => m.id)).toEqual([
      "lease_acquisitions", "lease_renewals", "lease_renewal_refusals", "lease_expiries", "lease_expiry_age", "recoveries", "lease_releases", "lease_revocations",
    ]);
    expect(metrics.uncertainty.map((m) => m.id)).toEqual([
      "steps_entering_unknown", "time_to_settle", "late_observations", "fencing_rejections", "duplicate_external_references",
      "recovery_decisions_by_capability", "open_review_cases",
    ]);
    expect(series("lease_acquisitions").points).toHaveLength(10);
    expect(column("lease_acquisitions", "acquired")).toEqual([1, 1, 0, 0, 1, 0, 0, 0, 0, 0]);
    expect(series("lease_acquisitions").total).toEqual({ acquired: 3 });
    expect(series("lease_renewals").total).toEqual({ renewed: 3 });
    expect(series("lease_renewal_refusals").total).toEqual({ renewal_refused: 1 });
    expect(column("lease_expiries", "expiry_observed")[5]).toBe(1);
    expect(series("lease_expiry_age").total).toEqual({ age_p50: 60, age_max: 60, detection_lag_p50: 30 });
    expect(column("lease_expiry_age", "age_p50")[0]).toBeNull();
    expect(series("recoveries").total).toMatchObject({ review: 1, retry_same_key: 1, make_ready: 0 });
    expect(series("lease_releases").total).toEqual({ after_receipt: 1, handed_back: 0, after_failure: 0 });
    expect(series("lease_revocations").total).toEqual({ revoked: 1 });

    expect(series("steps_entering_unknown").total).toEqual({ lease_expired: 1, attempt_failed: 0, lease_revoked: 0 });
    expect(series("time_to_settle").total).toMatchObject({ receipt_p50: 60, receipt_p95: 60, manual_p50: 120 });
    expect(column("time_to_settle", "receipt_p50")[7]).toBe(60);
    expect(series("late_observations").total).toEqual({ late: 1 });
    expect(series("fencing_rejections").total).toMatchObject({ expired: 2, superseded: 0 });
    // ref-1 seen at 180, ref-2 first seen at 320 (late observation): one duplicate, in the 5th minute.
    expect(series("duplicate_external_references").total).toEqual({ duplicate: 1 });
    expect(column("duplicate_external_references", "duplicate")[5]).toBe(1);
    expect(series("recovery_decisions_by_capability").total).toMatchObject({ prohibited: 1, idempotency_protected: 1, safe: 0 });
    // Open at each bucket's end: the earlier case from 60 until 480 (still open at 480), the later from 300.
    expect(column("open_review_cases", "open")).toEqual([0, 1, 1, 1, 1, 2, 2, 2, 1, 1]);
    expect(series("fencing_rejections").listHref).toBe(`/steps?hasRejection=true&from=${encodeURIComponent(at(0))}&to=${encodeURIComponent(at(600))}`);
  });

  test("rank what falls in a narrower range against the history before it", async ({ db }) => {
    await seed(db.pool);
    const read = async (from: number, to: number) => {
      const metrics = await readMetrics(db.pool, resolveRange(metricsQuery.parse({ from: at(from), to: at(to), bucket: "1m" })));
      return (id: string) => metrics.uncertainty.find((m) => m.id === id)!;
    };
    // ref-1 (180) lies before the range: ref-2 (320) is still the step's second reference.
    const late = await read(300, 600);
    expect(late("duplicate_external_references").total).toEqual({ duplicate: 1 });
    // The first invocation (360) is read from the attempts, whatever the range.
    const settled = await read(400, 600);
    expect(settled("time_to_settle").total).toMatchObject({ receipt_p50: 60 });
    expect(settled("open_review_cases").points.map((p) => p.values.open)).toEqual([2, 1, 1, 1]);
    // Only ref-1 was seen before 300: no duplicate yet.
    const early = await read(0, 300);
    expect(early("duplicate_external_references").total).toEqual({ duplicate: 0 });
  });

  test("refuse a reversed, too long, or too finely bucketed range", () => {
    expect(() => resolveRange({ from: at(60), to: at(0), bucket: "1m" })).toThrow(/before/);
    expect(() => resolveRange({ from: at(0), to: at(40 * 86_400), bucket: "1d" })).toThrow(/31 days/);
    expect(() => resolveRange({ from: at(0), to: at(2 * 86_400), bucket: "1m" })).toThrow(/wider bucket/);
  });
});

describe("drilling down", () => {
  test("the step list finds the steps behind 'entering unknown' and 'duplicate external references'", async ({ db }) => {
    await seed(db.pool);
    const ids = async (query: Record<string, string>) => (await listSteps(db.pool, listStepsQuery.parse(query))).items.map((s) => s.name);
    expect(await ids({ enteredUnknown: "true", from: at(0), to: at(600) })).toEqual(["only"]);
    expect(await ids({ enteredUnknown: "true", from: at(600), to: at(1200) })).toEqual([]);
    expect(await ids({ duplicateReference: "true" })).toEqual(["only"]);
    expect(await ids({ recovery: "retry_same_key", from: at(0), to: at(600) })).toEqual(["only"]);
    expect(await ids({ recovery: "make_ready" })).toEqual([]);
    expect(await ids({ capability: "prohibited", from: at(0), to: at(600) })).toEqual(["only"]);
    expect(await ids({ capability: "reconcilable" })).toEqual([]);
  });
});

describe("prometheus totals", () => {
  test("carry the same figures over all history, one family per name prefix", async ({ db }) => {
    await seed(db.pool);
    const text = renderExposition(await readTotals(db.pool));
    expect(text).toContain("# TYPE fenceline_churn_lease_acquisitions_total counter\nfenceline_churn_lease_acquisitions_total 4\n");
    expect(text).toContain('fenceline_churn_recoveries_total{category="review"} 1\n');
    expect(text).toContain('fenceline_uncertainty_fencing_rejections_total{reason="expired"} 2\n');
    expect(text).toContain("# TYPE fenceline_uncertainty_open_review_cases gauge\nfenceline_uncertainty_open_review_cases 1\n");
    expect(text).toContain('fenceline_uncertainty_time_to_settle_seconds{stat="receipt_p50"} 60\n');
    expect(text).toContain('fenceline_uncertainty_time_to_settle_seconds{stat="manual_p50"} 120\n');
  });
});
