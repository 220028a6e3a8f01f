/**
 * The database identity check (lib/engine/epoch-identity.ts): the identity recorded with the
 * current epoch beside the server's own, and the advisory lock that lets one process at a time
 * act on a change.
 */
import type { NamedSql } from "../db";

/** The current epoch's recorded identity and the server's, as text (system identifiers are 64-bit). */
export const databaseIdentity: NamedSql = {
  name: "fl_database_identity",
  text: `
SELECT e.id::text AS epoch,
       e.system_identifier::text AS recorded_system, e.timeline AS recorded_timeline,
       fl_database_system_identifier()::text AS system, fl_database_timeline() AS timeline
FROM epoch e
WHERE e.id = fl_current_epoch()`,
};

/**
 * Taken on a connection of its own by the process that acts on a changed identity, so two
 * processes that noticed it at once start one transition, and a process that noticed it before
 * another's transition finished re-checks under the lock and finds the new epoch stamped.
 */
export const tryIdentityLock: NamedSql = {
  name: "fl_try_identity_lock",
  text: `SELECT pg_try_advisory_lock(hashtextextended('fenceline.epoch-identity', 0)) AS locked`,
};

export const releaseIdentityLock: NamedSql = {
  name: "fl_release_identity_lock",
  text: `SELECT pg_advisory_unlock(hashtextextended('fenceline.epoch-identity', 0))`,
};

/**
 * Ends as failed ($1 why) an open transition begun under another database identity than the
 * server's: its process ran against the old primary and is gone with it, and while it is open no
 * step is claimed. Returns the abandoned transition's id.
 */
export const abandonOrphanedTransition: NamedSql = {
  name: "fl_abandon_orphaned_epoch_transition",
  text: `
UPDATE epoch_transition
SET state = 'failed', finished_at = now(), destinations = destinations || jsonb_build_object('error', $1::text)
WHERE finished_at IS NULL
  AND (system_identifier <> fl_database_system_identifier() OR timeline <> fl_database_timeline())
RETURNING id::text`,
};
