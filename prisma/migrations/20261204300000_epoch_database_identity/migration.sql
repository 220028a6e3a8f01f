-- The database's identity recorded with each epoch (docs/decisions/015-failover-is-a-restore-in-miniature.md).
--
-- A promoted standby keeps its primary's system identifier but writes on a new timeline; a
-- restore into another cluster has another system identifier. Either way the terms handed out
-- in the current epoch may not all be in this database, so every coordinator compares the
-- identity recorded with the current epoch to the server's and starts an epoch transition when
-- they differ. The columns default to the identity of the server that inserts the row, so an
-- epoch is stamped in the same statement that opens it; the existing epochs get the identity of
-- the server this migration runs on (the best knowledge there is).

-- pg_control_system(): the cluster's system identifier, set by initdb, kept by pg_basebackup.
CREATE FUNCTION "fl_database_system_identifier"() RETURNS BIGINT
  LANGUAGE sql STABLE
  AS $$ SELECT system_identifier FROM pg_control_system() $$;

-- The timeline this server writes WAL on. pg_control_checkpoint() is not the source: after
-- `pg_ctl promote` it still shows the old timeline until the next checkpoint completes (seen on
-- PostgreSQL 15: timeline 1 for as long as no checkpoint ran), whereas the name of the WAL file
-- being written carries the new one at once. A standby writes no WAL: there the last
-- checkpoint's timeline is all there is, and nothing is stamped there anyway.
CREATE FUNCTION "fl_database_timeline"() RETURNS INTEGER
  LANGUAGE sql VOLATILE
  AS $$
    SELECT CASE WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint())
                ELSE ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::integer
           END
  $$;

ALTER TABLE "epoch"
  ADD COLUMN "system_identifier" BIGINT NOT NULL DEFAULT fl_database_system_identifier(),
  ADD COLUMN "timeline" INTEGER NOT NULL DEFAULT fl_database_timeline();

-- Between a promotion and the transition that follows it, a claim would hand out terms of the old
-- epoch again: the ones the lost commits had handed out. Every attempt is the claim of a term, so
-- an attempt may only be inserted while the server is the one the current epoch was opened on;
-- otherwise the claim fails (SQLSTATE FL001) and is retried after the transition. Once per
-- statement, not per row: a claim inserts all its attempts in one statement, and a check per row
-- cost about 15 µs per claimed step (`npm run bench -- --only profile`, claims of 50). Reading pg_control_system() reads the control file (about 30 µs on
-- the loaded test machine, against 4–8 µs for the timeline), and a server's system identifier
-- never changes while it runs, so a connection reads it once and keeps it in a setting of its
-- session; a pooler that hands the connection to another client hands it to the same server.
CREATE FUNCTION "fl_refuse_term_on_changed_identity"() RETURNS TRIGGER
  LANGUAGE plpgsql
  AS $$
DECLARE
  recorded record;
  system_identifier text := current_setting('fenceline.system_identifier', true);
  timeline integer := fl_database_timeline();
BEGIN
  IF system_identifier IS NULL OR system_identifier = '' THEN
    system_identifier := fl_database_system_identifier()::text;
    PERFORM set_config('fenceline.system_identifier', system_identifier, false);
  END IF;
  SELECT e.id, e.system_identifier::text AS system_identifier, e.timeline INTO recorded FROM epoch e WHERE e.id = fl_current_epoch();
  IF recorded.system_identifier <> system_identifier OR recorded.timeline <> timeline THEN
    RAISE EXCEPTION 'database identity changed since epoch % was opened (system % → %, timeline % → %): no fencing term until an epoch transition',
      recorded.id, recorded.system_identifier, system_identifier, recorded.timeline, timeline
      USING ERRCODE = 'FL001';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "attempt_refused_on_changed_identity"
  BEFORE INSERT ON "attempt"
  FOR EACH STATEMENT EXECUTE FUNCTION fl_refuse_term_on_changed_identity();

-- A transition records the identity it began under. One left open by a failover (begun on the old
-- primary, whose process is gone with it) would stop every claim on the promoted standby for
-- good; an open transition begun under another identity than the server's is abandoned by the
-- coordinator that follows the change (lib/engine/sql/epoch-identity.ts).
ALTER TABLE "epoch_transition"
  ADD COLUMN "system_identifier" BIGINT NOT NULL DEFAULT fl_database_system_identifier(),
  ADD COLUMN "timeline" INTEGER NOT NULL DEFAULT fl_database_timeline();
