/**
 * The metrics' named statements: one per metric, but one for the seven lease-churn series. Each
 * takes ($1 from, $2 to, $3 bucket interval) and returns rows (bucket, key, value), bucketed with
 * date_bin from $1, plus one row per key with a NULL bucket (GROUPING SETS) holding the figure
 * over the whole range. Events are read from the append-only history tables, by their database
 * times, and only those of the range (plus the history a ranked series needs).
 */
import type { NamedSql } from "@/lib/engine/db";

/**
 * Lease churn in one pass over the range's lease events, serving seven metrics by key: events
 * counted by kind (acquisitions, renewals, renewal refusals, expiries, revocations); releases by
 * how the lease ended (after its receipt, handed back before invoking, after a failed attempt);
 * and for each observed expiry the lease's age and how long after expiresAt the scan saw it.
 */
export const leaseChurn: NamedSql = {
  name: "fl_metric_lease_churn",
  text: `
WITH event AS MATERIALIZED (
  SELECT date_bin($3::interval, le.at, $1::timestamptz) AS bucket, le.kind, le.at, le.step_id, le.fencing_term
  FROM lease_history le
  WHERE le.at >= $1 AND le.at < $2
    AND le.kind IN ('acquired', 'renewed', 'renewal_refused', 'expiry_observed', 'revoked', 'released')
),
counted AS (
  SELECT bucket, kind::text AS key, count(*)::float8 AS value
  FROM event WHERE kind <> 'released'
  GROUP BY GROUPING SETS ((bucket, kind), (kind))
),
released AS (
  SELECT bucket, key, count(*)::float8 AS value
  FROM (SELECT e.bucket,
               CASE l.end_reason WHEN 'receipt' THEN 'after_receipt' WHEN 'failed' THEN 'after_failure' ELSE 'handed_back' END AS key
        FROM event e JOIN lease l ON l.step_id = e.step_id AND l.fencing_term = e.fencing_term
        WHERE e.kind = 'released') r
  GROUP BY GROUPING SETS ((bucket, key), (key))
),
expiry AS (
  SELECT bucket,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY age_s) AS age_p50,
         max(age_s) AS age_max,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_s) AS detection_lag_p50
  FROM (SELECT e.bucket, extract(epoch FROM e.at - l.leased_at)::float8 AS age_s,
               extract(epoch FROM e.at - l.expires_at)::float8 AS lag_s
        FROM event e JOIN lease l ON l.step_id = e.step_id AND l.fencing_term = e.fencing_term
        WHERE e.kind = 'expiry_observed') x
  GROUP BY GROUPING SETS ((bucket), ())
)
SELECT bucket, key, value FROM counted
UNION ALL
SELECT bucket, key, value FROM released
UNION ALL
SELECT bucket, key, value FROM expiry
CROSS JOIN LATERAL (VALUES ('age_p50', age_p50), ('age_max', age_max), ('detection_lag_p50', detection_lag_p50)) AS v(key, value)`,
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
 * case's resolution by a person, bucketed by when it was settled. Only steps settled in the range
 * are read, each one's first invocation by its attempts' (step_id, fencing_term) index.
 */
export const timeToSettle: NamedSql = {
  name: "fl_metric_time_to_settle",
  text: `
WITH settled AS (
  SELECT r.step_id, r.created_at AS at, 'receipt' AS via
  FROM receipt r
  WHERE r.verification_method <> 'manual_review' AND r.created_at >= $1 AND r.created_at < $2
  UNION ALL
  SELECT rc.step_id, rc.resolved_at, 'manual'
  FROM review_case rc
  WHERE rc.status = 'resolved' AND rc.resolved_at >= $1 AND rc.resolved_at < $2
),
timed AS (
  SELECT s.at, s.via, extract(epoch FROM s.at - f.began_at)::float8 AS seconds
  FROM settled s
  CROSS JOIN LATERAL (SELECT min(a.invocation_began_at) AS began_at FROM attempt a WHERE a.step_id = s.step_id) f
  WHERE f.began_at IS NOT NULL
),
stats AS (
  SELECT bucket, via,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY seconds) AS p50,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY seconds) AS p95
  FROM (SELECT date_bin($3::interval, at, $1::timestamptz) AS bucket, via, seconds FROM timed) e
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
 * duplicates: the destination may hold more than one effect for one step. Only steps told of a
 * reference within the range can have a duplicate first seen there; their whole history is read
 * to rank it.
 */
export const duplicateReferences: NamedSql = {
  name: "fl_metric_duplicate_references",
  text: `
WITH told_in_range AS (
  SELECT step_id FROM attempt
  WHERE external_reference IS NOT NULL
    AND coalesce(response_observed_at, ended_at, created_at) >= $1 AND coalesce(response_observed_at, ended_at, created_at) < $2
  UNION
  SELECT step_id FROM late_observation WHERE external_reference IS NOT NULL AND at >= $1 AND at < $2
  UNION
  SELECT step_id FROM receipt WHERE external_reference IS NOT NULL AND created_at >= $1 AND created_at < $2
),
sighting AS (
  SELECT a.step_id, a.external_reference AS reference, coalesce(a.response_observed_at, a.ended_at, a.created_at) AS at
  FROM attempt a JOIN told_in_range t ON t.step_id = a.step_id WHERE a.external_reference IS NOT NULL
  UNION ALL
  SELECT lo.step_id, lo.external_reference, lo.at
  FROM late_observation lo JOIN told_in_range t ON t.step_id = lo.step_id WHERE lo.external_reference IS NOT NULL
  UNION ALL
  SELECT r.step_id, r.external_reference, r.created_at
  FROM receipt r JOIN told_in_range t ON t.step_id = r.step_id WHERE r.external_reference IS NOT NULL
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

/**
 * Review cases open at the end of each bucket (or now, for the bucket still running): the cases
 * open at the range's start, plus a running sum of openings and resolutions. A case counts from
 * the first bucket that ends after it opened until the first that ends after it was resolved.
 */
export const openReviewCases: NamedSql = {
  name: "fl_metric_open_review_cases",
  text: `
WITH buckets AS (
  SELECT b AS bucket FROM generate_series($1::timestamptz, $2::timestamptz - interval '1 microsecond', $3::interval) AS b
),
in_range AS (
  SELECT opened_at, resolved_at FROM review_case
  WHERE opened_at < $2 AND (resolved_at IS NULL OR resolved_at >= $1)
),
change AS (
  SELECT greatest(date_bin($3::interval, opened_at, $1::timestamptz), $1::timestamptz) AS bucket, 1 AS delta FROM in_range
  UNION ALL
  SELECT date_bin($3::interval, resolved_at, $1::timestamptz), -1 FROM in_range WHERE resolved_at < $2
),
per_bucket AS (
  SELECT bk.bucket, coalesce(sum(c.delta), 0) AS delta
  FROM buckets bk LEFT JOIN change c ON c.bucket = bk.bucket
  GROUP BY bk.bucket
)
SELECT bucket, 'open' AS key, (sum(delta) OVER (ORDER BY bucket))::float8 AS value FROM per_bucket
UNION ALL
SELECT NULL, 'open', count(*)::float8 FROM review_case WHERE status = 'open'`,
};
