/**
 * The relay's named statements. A delivery (one event for one endpoint) is a small state machine:
 * pending → delivered (a 2xx: the receipt), failed (a 4xx other than 408/429: no retries) or,
 * once its retry window has passed, dead_lettered; an engineer's redelivery makes it pending
 * again. A relay sends only under a lease on the delivery row (term, owner, expiry on the
 * database clock), and concludes only while it still holds that term, so several relays never
 * send one delivery at once in the normal path, and one killed mid-send is taken over when its
 * lease expires.
 */
import type { NamedSql } from "@/lib/engine/db";

/** Events not yet prepared ($1 limit), locked so that one relay prepares each. */
export const lockUnprepared: NamedSql = {
  name: "fl_webhook_lock_unprepared",
  text: `
SELECT e.id, e.type, e.workflow_id, e.detail, e.created_at, w.kind
FROM outbox_event e JOIN workflow w ON w.id = e.workflow_id
WHERE e.prepared_at IS NULL
ORDER BY e.created_at
LIMIT $1
FOR UPDATE OF e SKIP LOCKED`,
};

/**
 * Freezes each event's body ($1 ids, $2 bodies) and creates one pending delivery per enabled
 * endpoint subscribed to its type (and, for an endpoint of an app, only for that app's requests).
 */
export const prepareEvents: NamedSql = {
  name: "fl_webhook_prepare_events",
  text: `
WITH prepared AS (
  UPDATE outbox_event e SET body = r.body, prepared_at = now()
  FROM unnest($1::uuid[], $2::jsonb[]) AS r(id, body)
  WHERE e.id = r.id AND e.prepared_at IS NULL
  RETURNING e.id, e.type, e.workflow_id
)
INSERT INTO webhook_delivery (event_id, endpoint_id)
SELECT p.id, ep.id
FROM prepared p JOIN workflow w ON w.id = p.workflow_id
JOIN webhook_endpoint ep ON ep.disabled_at IS NULL AND p.type = ANY (ep.event_types)
                        AND (ep.app IS NULL OR w.requester = 'app:' || ep.app)
ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
};

/**
 * Claims up to $3 due deliveries for relay $1, each under a lease of $2 ms: pending, due, and not
 * under an unexpired lease of another relay, on an enabled endpoint. Bumps the term and opens the
 * attempt of that term.
 */
export const claimDeliveries: NamedSql = {
  name: "fl_webhook_claim_deliveries",
  text: `
WITH due AS (
  SELECT d.id FROM webhook_delivery d JOIN webhook_endpoint ep ON ep.id = d.endpoint_id
  WHERE d.state = 'pending' AND d.next_attempt_at <= now()
    AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= now())
    AND ep.disabled_at IS NULL
  ORDER BY d.next_attempt_at
  LIMIT $3
  FOR UPDATE OF d SKIP LOCKED
),
claimed AS (
  UPDATE webhook_delivery d
  SET lease_term = d.lease_term + 1, lease_owner = $1, lease_expires_at = now() + $2::int * interval '1 millisecond',
      attempts = d.attempts + 1
  FROM due WHERE d.id = due.id
  RETURNING d.id, d.lease_term, d.event_id, d.endpoint_id, d.attempts, d.retrying_since
),
opened AS (
  INSERT INTO webhook_attempt (delivery_id, lease_term, relay) SELECT id, lease_term, $1 FROM claimed
)
SELECT c.id::text, c.lease_term::text, c.event_id, c.attempts, e.body, ep.url, ep.secret
FROM claimed c JOIN outbox_event e ON e.id = c.event_id JOIN webhook_endpoint ep ON ep.id = c.endpoint_id`,
};

/**
 * Concludes delivery $1 under term $2 of relay $3 with $4 (delivered, failed, or pending for a
 * retry in $7 ms), $5 status code, $6 error, $8 latency ms, $9 retry window ms. Only the term's
 * holder concludes; a retry that would start past the window dead-letters instead. The attempt
 * of the term is closed either way (what it saw is evidence), and the endpoint's failing-since
 * mark is set on a failure and cleared on a 2xx.
 */
export const concludeDelivery: NamedSql = {
  name: "fl_webhook_conclude_delivery",
  text: `
WITH concluded AS (
  UPDATE webhook_delivery d
  SET state = CASE WHEN $4 = 'pending' AND now() >= d.retrying_since + $9::int * interval '1 millisecond' THEN 'dead_lettered' ELSE $4 END,
      next_attempt_at = CASE WHEN $4 = 'pending' THEN now() + $7::int * interval '1 millisecond' ELSE d.next_attempt_at END,
      delivered_at = CASE WHEN $4 = 'delivered' THEN now() ELSE d.delivered_at END,
      last_status = $5, last_error = $6, lease_owner = NULL, lease_expires_at = NULL
  WHERE d.id = $1::bigint AND d.lease_term = $2::bigint AND d.lease_owner = $3 AND d.state = 'pending'
  RETURNING d.id, d.endpoint_id, d.state
),
attempt_closed AS (
  UPDATE webhook_attempt a SET ended_at = now(), status_code = $5, error = $6, latency_ms = $8
  WHERE a.delivery_id = $1::bigint AND a.lease_term = $2::bigint
),
endpoint_marked AS (
  UPDATE webhook_endpoint ep
  SET failing_since = CASE WHEN c.state = 'delivered' THEN NULL ELSE coalesce(ep.failing_since, now()) END
  FROM concluded c WHERE ep.id = c.endpoint_id
)
SELECT state FROM concluded`,
};

/**
 * Makes deliveries of endpoint $1 pending again, now, with a fresh retry window: every
 * dead-lettered one, or only delivery $2 when it is dead-lettered or failed.
 */
export const redeliver: NamedSql = {
  name: "fl_webhook_redeliver",
  text: `
UPDATE webhook_delivery d
SET state = 'pending', next_attempt_at = now(), retrying_since = now(), last_error = NULL
WHERE d.endpoint_id = $1::uuid
  AND (($2::bigint IS NULL AND d.state = 'dead_lettered') OR (d.id = $2::bigint AND d.state IN ('dead_lettered', 'failed')))
RETURNING d.id::text`,
};
