/**
 * One named statement per metric. Every statement takes ($1 from, $2 to, $3 bucket interval) and
 * returns rows (bucket, key, value), bucketed with date_bin from $1, plus one row per key with a
 * NULL bucket (GROUPING SETS) holding the figure over the whole range. Events are read from the
 * append-only history tables, by their database times.
 */
import type { NamedSql } from "@/lib/engine/db";

const leaseEventCount = (name: string, kind: string): NamedSql => ({
  name,
  text: `
SELECT bucket, '${kind}' AS key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, le.at, $1::timestamptz) AS bucket
      FROM lease_event le WHERE le.kind = '${kind}' AND le.at >= $1 AND le.at < $2) e
GROUP BY GROUPING SETS ((bucket), ())`,
});

export const acquisitions = leaseEventCount("fl_metric_acquisitions", "acquired");
export const renewals = leaseEventCount("fl_metric_renewals", "renewed");
export const renewalRefusals = leaseEventCount("fl_metric_renewal_refusals", "renewal_refused");
export const expiries = leaseEventCount("fl_metric_expiries", "expiry_observed");
export const revocations = leaseEventCount("fl_metric_revocations", "revoked");

/** Age of a lease when its expiry was observed, and how long after expiresAt the scan saw it. */
export const expiryAge: NamedSql = {
  name: "fl_metric_expiry_age",
  text: `
WITH observed AS (
  SELECT le.at, extract(epoch FROM le.at - l.leased_at)::float8 AS age_s,
         extract(epoch FROM le.at - l.expires_at)::float8 AS lag_s
  FROM lease_event le
  JOIN lease l ON l.step_id = le.step_id AND l.fencing_term = le.fencing_term
  WHERE le.kind = 'expiry_observed' AND le.at >= $1 AND le.at < $2
),
stats AS (
  SELECT bucket,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY age_s) AS age_p50,
         max(age_s) AS age_max,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_s) AS detection_lag_p50
  FROM (SELECT date_bin($3::interval, at, $1::timestamptz) AS bucket, age_s, lag_s FROM observed) e
  GROUP BY GROUPING SETS ((bucket), ())
)
SELECT bucket, key, value FROM stats
CROSS JOIN LATERAL (VALUES ('age_p50', age_p50), ('age_max', age_max), ('detection_lag_p50', detection_lag_p50)) AS v(key, value)`,
};

/** Releases, by how the lease ended: after its receipt, handed back before invoking, after a failed attempt. */
export const releases: NamedSql = {
  name: "fl_metric_releases",
  text: `
SELECT bucket, key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, le.at, $1::timestamptz) AS bucket,
             CASE l.end_reason WHEN 'receipt' THEN 'after_receipt' WHEN 'failed' THEN 'after_failure' ELSE 'handed_back' END AS key
      FROM lease_event le
      JOIN lease l ON l.step_id = le.step_id AND l.fencing_term = le.fencing_term
      WHERE le.kind = 'released' AND le.at >= $1 AND le.at < $2) e
GROUP BY GROUPING SETS ((bucket, key), (key))`,
};

export const recoveriesByCategory: NamedSql = {
  name: "fl_metric_recoveries_by_category",
  text: `
SELECT bucket, key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, rd.decided_at, $1::timestamptz) AS bucket, rd.category::text AS key
      FROM recovery_decision rd WHERE rd.decided_at >= $1 AND rd.decided_at < $2) e
GROUP BY GROUPING SETS ((bucket, key), (key))`,
};

/**
 * A step enters unknown when its lease ended (expiry, failure report, revoke) after the invocation
 * began and before any response or receipt was recorded: only evidence can settle it now.
 */
export const enteringUnknown: NamedSql = {
  name: "fl_metric_entering_unknown",
  text: `
SELECT bucket, key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, rd.decided_at, $1::timestamptz) AS bucket, rd.trigger::text AS key
      FROM recovery_decision rd
      WHERE rd.decided_at >= $1 AND rd.decided_at < $2
        AND rd.evidence->>'checkpoint' = 'invocation_began'
        AND rd.evidence->>'observedEffect' IS NULL
        AND coalesce((rd.evidence->>'receiptExists')::boolean, false) = false) e
GROUP BY GROUPING SETS ((bucket, key), (key))`,
};

/**
 * From the step's first invocation to its receipt (automatic verification) or to the review
 * case's resolution by a person, bucketed by when it was settled.
 */
export const timeToSettle: NamedSql = {
  name: "fl_metric_time_to_settle",
  text: `
WITH first_invocation AS (
  SELECT step_id, min(invocation_began_at) AS began_at FROM attempt WHERE invocation_began_at IS NOT NULL GROUP BY step_id
),
settled AS (
  SELECT r.created_at AS at, 'receipt' AS via, extract(epoch FROM r.created_at - f.began_at)::float8 AS seconds
  FROM receipt r JOIN first_invocation f ON f.step_id = r.step_id
  WHERE r.verification_method <> 'manual_review' AND r.created_at >= $1 AND r.created_at < $2
  UNION ALL
  SELECT rc.resolved_at, 'manual', extract(epoch FROM rc.resolved_at - f.began_at)::float8
  FROM review_case rc JOIN first_invocation f ON f.step_id = rc.step_id
  WHERE rc.status = 'resolved' AND rc.resolved_at >= $1 AND rc.resolved_at < $2
),
stats AS (
  SELECT bucket, via,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds) AS p95
  FROM (SELECT date_bin($3::interval, at, $1::timestamptz) AS bucket, via, seconds FROM settled) e
  GROUP BY GROUPING SETS ((bucket, via), (via))
)
SELECT bucket, via || '_' || key AS key, value FROM stats
CROSS JOIN LATERAL (VALUES ('p50', p50), ('p95', p95)) AS v(key, value)`,
};

export const lateObservations: NamedSql = {
  name: "fl_metric_late_observations",
  text: `
SELECT bucket, 'late' AS key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, lo.at, $1::timestamptz) AS bucket
      FROM late_observation lo WHERE lo.at >= $1 AND lo.at < $2) e
GROUP BY GROUPING SETS ((bucket), ())`,
};

export const fencingRejections: NamedSql = {
  name: "fl_metric_fencing_rejections",
  text: `
SELECT bucket, key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, fr.at, $1::timestamptz) AS bucket, fr.reason::text AS key
      FROM fencing_rejection fr WHERE fr.at >= $1 AND fr.at < $2) e
GROUP BY GROUPING SETS ((bucket, key), (key))`,
};

/**
 * Every distinct external reference a step was told about (attempt responses, late
 * observations, receipts), first sighting each; a step's second and later references are
 * duplicates: the destination may hold more than one effect for one step.
 */
export const duplicateReferences: NamedSql = {
  name: "fl_metric_duplicate_references",
  text: `
WITH sighting AS (
  SELECT step_id, external_reference AS reference, coalesce(response_observed_at, ended_at, created_at) AS at
  FROM attempt WHERE external_reference IS NOT NULL
  UNION ALL
  SELECT step_id, external_reference, at FROM late_observation WHERE external_reference IS NOT NULL
  UNION ALL
  SELECT step_id, external_reference, created_at FROM receipt WHERE external_reference IS NOT NULL
),
first_seen AS (
  SELECT step_id, reference, min(at) AS at FROM sighting GROUP BY step_id, reference
),
ranked AS (
  SELECT at, row_number() OVER (PARTITION BY step_id ORDER BY at, reference) AS n FROM first_seen
)
SELECT bucket, 'duplicate' AS key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, at, $1::timestamptz) AS bucket FROM ranked WHERE n > 1 AND at >= $1 AND at < $2) e
GROUP BY GROUPING SETS ((bucket), ())`,
};

/** Recovery decisions by the repetition policy of the adapter's contract, as recorded in the decision's evidence. */
export const decisionsByCapability: NamedSql = {
  name: "fl_metric_decisions_by_capability",
  text: `
SELECT bucket, key, count(*)::float8 AS value
FROM (SELECT date_bin($3::interval, rd.decided_at, $1::timestamptz) AS bucket,
             coalesce(rd.evidence->'adapter'->>'repetition', 'unknown') AS key
      FROM recovery_decision rd WHERE rd.decided_at >= $1 AND rd.decided_at < $2) e
GROUP BY GROUPING SETS ((bucket, key), (key))`,
};

/** Review cases open at the end of each bucket (or now, for the bucket still running). */
export const openReviewCases: NamedSql = {
  name: "fl_metric_open_review_cases",
  text: `
WITH buckets AS (
  SELECT b AS bucket, least(b + $3::interval, now()) AS at
  FROM generate_series($1::timestamptz, $2::timestamptz - interval '1 microsecond', $3::interval) AS b
)
SELECT bk.bucket, 'open' AS key,
       (SELECT count(*) FROM review_case rc
        WHERE rc.opened_at < bk.at AND (rc.resolved_at IS NULL OR rc.resolved_at >= bk.at))::float8 AS value
FROM buckets bk
UNION ALL
SELECT NULL, 'open', count(*)::float8 FROM review_case WHERE status = 'open'`,
};
