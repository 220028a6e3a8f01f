/**
 * The synthetic destination's own state, in schema `destination` of the database it is given.
 * It is not part of Fenceline's migrations: the destination stands for someone else's system, so
 * it creates its tables itself at startup and shares nothing with the engine's schema.
 *
 * Every effect the destination applies is one row of `destination.effect`, written in the same
 * statement as whatever allowed it (a fence advance, a binding), so the audit counts exactly the
 * effects that happened.
 */
import type { Statement } from "./db";

export const DESTINATION_KINDS = ["fenced", "idempotent", "queryable", "opaque"] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** Idempotent: every statement may run again at each start, and concurrently with another start. */
export const createSchema = `
SELECT pg_advisory_xact_lock(hashtext('fenceline destination schema'));
CREATE SCHEMA IF NOT EXISTS destination;
CREATE TABLE IF NOT EXISTS destination.effect (
  id                 bigserial PRIMARY KEY,
  kind               text NOT NULL CHECK (kind IN ('fenced', 'idempotent', 'queryable', 'opaque')),
  resource           text,
  request_identity   text,
  epoch              bigint,
  term               bigint,
  payload_digest     text NOT NULL,
  external_reference text NOT NULL UNIQUE,
  result             jsonb NOT NULL,
  applied_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS effect_by_identity ON destination.effect (kind, request_identity);
CREATE TABLE IF NOT EXISTS destination.fence (
  resource         text PRIMARY KEY,
  epoch            bigint NOT NULL,
  term             bigint NOT NULL,
  request_identity text NOT NULL,
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS destination.binding (
  kind               text NOT NULL,
  scope              text NOT NULL,
  key                text NOT NULL,
  payload_digest     text NOT NULL,
  external_reference text NOT NULL,
  result             jsonb NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (kind, scope, key)
);
CREATE TABLE IF NOT EXISTS destination.incident (
  id               bigserial PRIMARY KEY,
  kind             text NOT NULL,
  what             text NOT NULL CHECK (what IN ('stale_term', 'dropped_response')),
  resource         text,
  request_identity text,
  epoch            bigint,
  term             bigint,
  at               timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS destination.installed_epoch (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  epoch        bigint NOT NULL,
  installed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS destination.fault_settings (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  settings   jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);`;

/**
 * The fenced write, ($1 resource, $2 epoch, $3 term, $4 request identity, $5 payload digest,
 * $6 new external reference, $7 result). The fence row is the serialisation point: the upsert
 * locks it and re-checks the guard against the latest committed term, so of concurrent writers
 * only a strictly newer (epoch, term), or the same term from the same request, gets through. A
 * request identity already applied at this resource binds to its first effect, so a retry under a
 * newer term advances the fence without applying the effect twice. A write from an epoch older
 * than the installed one is refused whatever its term. `applied` is null when the
 * fence refused or the identity was already bound; `fenceReadStatement` then tells which.
 */
export const fencedWrite: Statement = {
  name: "dst_fenced_write",
  text: `
WITH installed AS (
  SELECT coalesce((SELECT epoch FROM destination.installed_epoch), 0) AS epoch
),
advanced AS (
  INSERT INTO destination.fence AS f (resource, epoch, term, request_identity)
  SELECT $1, $2, $3, $4 FROM installed WHERE $2 >= installed.epoch
  ON CONFLICT (resource) DO UPDATE
  SET epoch = excluded.epoch, term = excluded.term, request_identity = excluded.request_identity,
      updated_at = clock_timestamp()
  WHERE ((f.epoch, f.term) < (excluded.epoch, excluded.term)
     OR ((f.epoch, f.term) = (excluded.epoch, excluded.term) AND f.request_identity = excluded.request_identity))
    AND excluded.epoch >= (SELECT epoch FROM installed)
  RETURNING f.resource
),
bound AS (
  INSERT INTO destination.binding (kind, scope, key, payload_digest, external_reference, result)
  SELECT 'fenced', resource, $4, $5, $6, $7 FROM advanced
  ON CONFLICT (kind, scope, key) DO NOTHING
  RETURNING external_reference
),
applied AS (
  INSERT INTO destination.effect (kind, resource, request_identity, epoch, term, payload_digest, external_reference, result)
  SELECT 'fenced', $1, $4, $2, $3, $5, external_reference, $7 FROM bound
  RETURNING external_reference
)
SELECT EXISTS (SELECT 1 FROM advanced) AS advanced, (SELECT external_reference FROM applied) AS applied`,
};

/**
 * After a fenced write that applied nothing: the fence now (or the installed epoch, for a resource
 * never written), and what this identity is bound to.
 */
export const fencedState: Statement = {
  name: "dst_fenced_state",
  text: `
SELECT coalesce(f.epoch, i.epoch) AS epoch, f.term, b.external_reference, b.result, b.payload_digest,
       coalesce(i.epoch, 0) AS installed_epoch
FROM (SELECT 1) one
LEFT JOIN destination.installed_epoch i ON true
LEFT JOIN destination.fence f ON f.resource = $1
LEFT JOIN destination.binding b ON b.kind = 'fenced' AND b.scope = f.resource AND b.key = $2`,
};

/**
 * Installs epoch $1: from now on every fenced write from an older epoch is refused. An epoch only
 * moves forward; installing an older one changes nothing. Returns the epoch now installed.
 */
export const installEpoch: Statement = {
  name: "dst_install_epoch",
  text: `
INSERT INTO destination.installed_epoch AS i (singleton, epoch) VALUES (true, $1)
ON CONFLICT (singleton) DO UPDATE SET epoch = greatest(i.epoch, excluded.epoch), installed_at = clock_timestamp()
RETURNING epoch`,
};

/** The installed epoch and the highest epoch any fenced write has carried here. */
export const epochState: Statement = {
  name: "dst_epoch_state",
  text: `
SELECT coalesce((SELECT epoch FROM destination.installed_epoch), 0) AS installed,
       greatest(coalesce((SELECT max(epoch) FROM destination.fence), 0),
                coalesce((SELECT max(epoch) FROM destination.incident), 0)) AS highest_seen`,
};

/**
 * The idempotent write, ($1 key, $2 payload digest, $3 new external reference, $4 result). The
 * binding insert waits for any concurrent insert of the same key and yields to it, and the effect
 * is written only from a binding this statement created: one key, one effect.
 */
export const idempotentWrite: Statement = {
  name: "dst_idempotent_write",
  text: `
WITH bound AS (
  INSERT INTO destination.binding (kind, scope, key, payload_digest, external_reference, result)
  VALUES ('idempotent', '', $1, $2, $3, $4)
  ON CONFLICT (kind, scope, key) DO NOTHING
  RETURNING external_reference
),
applied AS (
  INSERT INTO destination.effect (kind, request_identity, payload_digest, external_reference, result)
  SELECT 'idempotent', $1, $2, external_reference, $4 FROM bound
  RETURNING external_reference
)
SELECT (SELECT external_reference FROM applied) AS applied`,
};

/** The result a key is bound to, read after the write yielded to an earlier one. */
export const bindingFor: Statement = {
  name: "dst_binding_for",
  text: `
SELECT external_reference, result, payload_digest
FROM destination.binding
WHERE kind = $1 AND scope = $2 AND key = $3`,
};

/**
 * An unprotected write ($1 kind, $2 request identity, $3 payload digest, $4 external reference,
 * $5 result): queryable and opaque apply every request they receive.
 */
export const plainWrite: Statement = {
  name: "dst_plain_write",
  text: `
INSERT INTO destination.effect (kind, request_identity, payload_digest, external_reference, result)
VALUES ($1, $2, $3, $4, $5)
RETURNING external_reference`,
};

/** Effects for client reference $1 at the queryable destination, first applied first. */
export const queryableStatus: Statement = {
  name: "dst_queryable_status",
  text: `
SELECT external_reference, applied_at
FROM destination.effect
WHERE kind = 'queryable' AND request_identity = $1
ORDER BY id`,
};

export const readFaultSettings: Statement = {
  name: "dst_read_fault_settings",
  text: `SELECT settings FROM destination.fault_settings WHERE singleton`,
};

export const writeFaultSettings: Statement = {
  name: "dst_write_fault_settings",
  text: `
INSERT INTO destination.fault_settings (singleton, settings) VALUES (true, $1)
ON CONFLICT (singleton) DO UPDATE SET settings = excluded.settings, updated_at = clock_timestamp()`,
};

export const effectCounts: Statement = {
  name: "dst_effect_counts",
  text: `SELECT kind, count(*)::int AS effects FROM destination.effect GROUP BY kind`,
};

/**
 * Request identities (idempotency keys, client references) applied more than once, per kind and
 * resource. Opaque and queryable effects without an identity cannot be told apart and are not
 * counted here.
 */
export const duplicateEffects: Statement = {
  name: "dst_duplicate_effects",
  text: `
SELECT kind, resource, request_identity, count(*)::int AS effects,
       array_agg(external_reference ORDER BY id) AS external_references
FROM destination.effect
WHERE request_identity IS NOT NULL
GROUP BY kind, resource, request_identity
HAVING count(*) > 1
ORDER BY kind, resource, request_identity`,
};

/**
 * Fenced effects whose (epoch, term) is not strictly above the previous effect at the same
 * resource. Effects of one resource get their ids while holding its fence row, so id order is
 * fence order.
 */
export const fenceRegressions: Statement = {
  name: "dst_fence_regressions",
  text: `
SELECT resource, epoch, term, previous_epoch, previous_term, external_reference
FROM (
  SELECT resource, epoch, term, external_reference,
         lag(epoch) OVER w AS previous_epoch, lag(term) OVER w AS previous_term
  FROM destination.effect
  WHERE kind = 'fenced'
  WINDOW w AS (PARTITION BY resource ORDER BY id)
) ordered
WHERE previous_epoch IS NOT NULL AND (epoch, term) <= (previous_epoch, previous_term)
ORDER BY resource, epoch, term`,
};

/**
 * Requests that changed nothing or whose answer never left, kept for the audit: a fenced write
 * refused as stale (409), or a committed effect whose response was dropped by fault injection.
 * ($1 kind, $2 what, $3 resource, $4 request identity, $5 epoch, $6 term)
 */
export const recordIncident: Statement = {
  name: "dst_record_incident",
  text: `
INSERT INTO destination.incident (kind, what, resource, request_identity, epoch, term)
VALUES ($1, $2, $3, $4, $5, $6)`,
};

export const incidentCounts: Statement = {
  name: "dst_incident_counts",
  text: `SELECT what, count(*)::int AS n FROM destination.incident GROUP BY what`,
};
