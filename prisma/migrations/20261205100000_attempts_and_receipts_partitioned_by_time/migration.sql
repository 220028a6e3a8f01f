-- Attempts and receipts partitioned by time (docs/decisions/017-history-by-partition-and-reads-off-the-primary.md).
-- Both are kept forever (SPEC.md: safety state), so a month of them is never dropped: once every
-- step in it is settled for good and it is older than the retention period, it is detached and
-- moved to the archive schema (<engine schema>_archive), where it stays queryable.
--
-- The partition key is the id, made time-ordered: new ids are UUIDv7 from the database clock
-- (fl_uuid_v7), so a month is a range of ids, the primary key stays (id), every reference by
-- attempt id stays valid, and a lookup by id prunes to one partition. Existing rows keep their
-- random (v4) ids, whose first 48 bits mean nothing: those below the first v7 id of 2020 (about
-- 0.6 % of them) go to <table>_legacy_before, those from 0x04000000… (a v7 id of May 2109) up
-- (98.4 %) to <table>_legacy_after, and the rest (1.0 %) to the default partition, from which
-- creating a month moves any that fall in it. Months from 2020 on can be created, for rows
-- written with an earlier id (seeded history, tests). The legacy partitions are never detached:
-- their ids say nothing of their age.
--
-- A partitioned table's unique indexes must hold its key, so three guards move:
--   receipt(step_id) unique   → receipt_step, a small unpartitioned table (step id → receipt id)
--                               written in the statement that writes the receipt; its primary key
--                               is "receipt_one_per_step".
--   attempt(step_id, term)    → the claim's guarded step update, the only writer of attempts: it
--   and one open lease/step     bumps the step's term and moves it from ready to leased under the
--                               row lock. The indexes stay, not unique.

-- A UUIDv7 (RFC 9562) for the moment p_at (default: the transaction's now(), as created_at):
-- 48 bits of Unix milliseconds, then version 7, then random bits. gen_random_uuid() is core
-- from PostgreSQL 13; PostgreSQL 18's uuidv7() uses clock_timestamp(), this one the same clock
-- as the row's created_at, so an id's month is its row's month.
CREATE FUNCTION "fl_uuid_v7"("p_at" TIMESTAMPTZ DEFAULT now())
  RETURNS UUID
  LANGUAGE sql VOLATILE PARALLEL SAFE
  AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM p_at) * 1000)::bigint) FROM 3) FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

-- The lowest UUIDv7 of the moment p_at: a month's partition holds ids from its first instant's
-- floor to the next month's.
CREATE FUNCTION "fl_uuid_v7_floor"("p_at" TIMESTAMPTZ)
  RETURNS UUID
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
  SELECT encode(substring(int8send(floor(extract(epoch FROM p_at) * 1000)::bigint) FROM 3) || '\x00000000000000000000'::bytea, 'hex')::uuid
$$;

-- The tables kept forever and partitioned by id, receipts first: retention detaches a month of
-- receipts before the attempts they name. Each partition of attempt is made with fillfactor 80
-- (migration 20261129200000: its rows are updated in place, and a partitioned parent holds no
-- storage parameters of its own).
CREATE FUNCTION "fl_safety_tables"()
  RETURNS TABLE ("table_name" TEXT, "storage" TEXT)
  LANGUAGE sql IMMUTABLE
  AS $$
  VALUES ('receipt', ''), ('attempt', ' WITH (fillfactor = 80)')
$$;

-- Creates one safety table's monthly partitions from p_from's month through p_through's, and
-- the months of any v7 id found in its default partition. Rows of a new month found in the
-- default partition are moved into it (receipts' permanence trigger lets this function alone
-- delete from a default partition, for the move).
CREATE FUNCTION "fl_ensure_safety_partitions_of"("p_table" TEXT, "p_storage" TEXT, "p_from" TIMESTAMPTZ, "p_through" TIMESTAMPTZ)
  RETURNS SETOF TEXT
  LANGUAGE plpgsql
  AS $$
DECLARE
  default_name TEXT := p_table || '_default';
  month TIMESTAMPTZ;
  earliest_stray TIMESTAMPTZ;
  partition_name TEXT;
  stray BOOLEAN;
BEGIN
  -- The earliest v7 id in the default partition (version nibble 7), as a moment.
  -- (min(uuid) is PostgreSQL 18's; ORDER BY … LIMIT 1 works on 15 too.)
  EXECUTE format($q$SELECT to_timestamp(('x' || left(replace(id::text, '-', ''), 12))::bit(48)::bigint / 1000.0)
                   FROM %I WHERE substr(id::text, 15, 1) = '7' ORDER BY id LIMIT 1$q$, default_name) INTO earliest_stray;
  month := date_trunc('month', least(p_from, coalesce(earliest_stray, p_from)), 'UTC');
  WHILE month <= p_through LOOP
    partition_name := p_table || '_' || to_char(month AT TIME ZONE 'UTC', 'YYYY_MM');
    IF to_regclass(quote_ident(partition_name)) IS NULL THEN
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE id >= $1 AND id < $2)', default_name)
        INTO stray USING fl_uuid_v7_floor(month), fl_uuid_v7_floor(month + interval '1 month');
      IF stray THEN
        EXECUTE format('CREATE TEMP TABLE fl_partition_move ON COMMIT DROP AS SELECT * FROM %I WHERE id >= $1 AND id < $2', default_name)
          USING fl_uuid_v7_floor(month), fl_uuid_v7_floor(month + interval '1 month');
        PERFORM set_config('fenceline.partition_move', 'on', true);
        EXECUTE format('DELETE FROM %I WHERE id >= $1 AND id < $2', default_name)
          USING fl_uuid_v7_floor(month), fl_uuid_v7_floor(month + interval '1 month');
        PERFORM set_config('fenceline.partition_move', 'off', true);
      END IF;
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)%s',
                     partition_name, p_table, fl_uuid_v7_floor(month), fl_uuid_v7_floor(month + interval '1 month'), p_storage);
      IF stray THEN
        EXECUTE format('INSERT INTO %I SELECT * FROM fl_partition_move', p_table);
        DROP TABLE fl_partition_move;
      END IF;
      RETURN NEXT partition_name;
    END IF;
    month := month + interval '1 month';
  END LOOP;
END
$$;

-- Every safety table's months from p_from's through p_through's; returns those created.
CREATE FUNCTION "fl_ensure_safety_partitions"("p_from" TIMESTAMPTZ, "p_through" TIMESTAMPTZ)
  RETURNS SETOF TEXT
  LANGUAGE sql
  AS $$
  SELECT created FROM fl_safety_tables() t, fl_ensure_safety_partitions_of(t.table_name, t.storage, p_from, p_through) created
$$;

-- Retention of the safety tables: detaches each monthly partition that ended before p_before and
-- holds no row of a step that is not settled for good (not in p_settled_states, or with an open
-- review case), and moves it to the archive schema, where it stays queryable. Receipts go first;
-- a month of attempts that a still-attached receipt names stays (referenced_by counts those
-- receipts). Returns each expired month, whether it was detached, and why not otherwise.
CREATE FUNCTION "fl_detach_expired_safety_partitions"("p_before" TIMESTAMPTZ, "p_settled_states" TEXT[])
  RETURNS TABLE ("table_name" TEXT, "partition_name" TEXT, "rows" BIGINT, "held_by_steps" BIGINT, "referenced_by" BIGINT, "detached" BOOLEAN)
  LANGUAGE plpgsql
  AS $$
DECLARE
  p RECORD;
  archive TEXT := current_schema() || '_archive';
BEGIN
  FOR p IN
    SELECT t.table_name AS parent, t.ord, c.relname::text AS child,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::uuid AS lower_id,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::uuid AS upper_id,
           to_date(right(c.relname, 7), 'YYYY_MM')::timestamp AT TIME ZONE 'UTC' AS month_start
    FROM fl_safety_tables() WITH ORDINALITY AS t(table_name, storage, ord)
    JOIN pg_inherits i ON i.inhparent = to_regclass(quote_ident(t.table_name))
    JOIN pg_class c ON c.oid = i.inhrelid
    -- Monthly partitions only: the default and the legacy ones hold ids that say nothing of age.
    WHERE c.relname ~ ('^' || t.table_name || '_\d{4}_\d{2}$')
    ORDER BY t.ord, month_start
  LOOP
    CONTINUE WHEN p.month_start + interval '1 month' > p_before;
    table_name := p.parent;
    partition_name := p.child;
    EXECUTE format('SELECT count(*) FROM %I', p.child) INTO "rows";
    EXECUTE format(
      'SELECT count(DISTINCT t.step_id) FROM %I t JOIN step s ON s.id = t.step_id
       WHERE s.state::text <> ALL ($1) OR EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = ''open'')',
      p.child) INTO held_by_steps USING p_settled_states;
    referenced_by := 0;
    IF p.parent = 'attempt' THEN
      SELECT count(*) INTO referenced_by FROM receipt r WHERE r.attempt_id >= p.lower_id AND r.attempt_id < p.upper_id;
    END IF;
    detached := held_by_steps = 0 AND referenced_by = 0;
    IF detached THEN
      -- Not CONCURRENTLY: PostgreSQL refuses it while the table has a default partition.
      EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', p.parent, p.child);
      EXECUTE format('ALTER TABLE %I SET SCHEMA %I', p.child, archive);
      -- A detached partition loses the triggers it had from its parent; receipts stay permanent.
      IF p.parent = 'receipt' THEN
        EXECUTE format('CREATE TRIGGER "receipt_permanent" BEFORE UPDATE OR DELETE ON %I.%I FOR EACH ROW EXECUTE FUNCTION %I."fl_forbid_receipt_change"()',
                       archive, p.child, current_schema());
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

-- Receipts stay permanent; the one exception is the partition maintenance above moving a row
-- out of a default partition into its new month (deleted and inserted again, unchanged).
CREATE OR REPLACE FUNCTION "fl_forbid_receipt_change"() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'receipt_default' AND current_setting('fenceline.partition_move', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'receipt is permanent: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END
$$;

DO $$
BEGIN
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', current_schema() || '_archive');
END
$$;

-- One receipt per step: the receipt statement writes this row with the receipt, so a second
-- receipt for a step fails on the primary key, as the unique index on receipt(step_id) did.
CREATE TABLE "receipt_step" (
  "step_id" UUID NOT NULL,
  "receipt_id" UUID NOT NULL,
  CONSTRAINT "receipt_one_per_step" PRIMARY KEY ("step_id")
);
INSERT INTO "receipt_step" ("step_id", "receipt_id") SELECT "step_id", "id" FROM "receipt";

DO $$
DECLARE
  t RECORD;
  old_name TEXT;
  index_definition TEXT;
  index_definitions TEXT[];
  trigger_definitions TEXT[];
  trigger_definition TEXT;
  view_definitions TEXT[];
  view_definition TEXT;
  view_names TEXT[];
  view_name TEXT;
  this_month TIMESTAMPTZ := date_trunc('month', now(), 'UTC');
BEGIN
  -- Views over these tables (lease, lease_history) are made again over the new ones.
  SELECT array_agg(format('CREATE VIEW %I AS %s', v.relname, pg_get_viewdef(v.oid)) ORDER BY v.oid), array_agg(v.relname::text ORDER BY v.oid DESC)
    INTO view_definitions, view_names
    FROM pg_class v
    WHERE v.relkind = 'v' AND v.relnamespace = current_schema()::regnamespace
      AND EXISTS (SELECT 1 FROM pg_rewrite r JOIN pg_depend d ON d.objid = r.oid
                  WHERE r.ev_class = v.oid AND d.refobjid IN (SELECT to_regclass(quote_ident(s.table_name)) FROM fl_safety_tables() s));
  FOREACH view_name IN ARRAY coalesce(view_names, '{}') LOOP
    EXECUTE format('DROP VIEW %I', view_name);
  END LOOP;

  FOR t IN SELECT * FROM fl_safety_tables() LOOP
    old_name := t.table_name || '_unpartitioned';
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t.table_name, old_name);
    -- Every index but the primary key and the unique ones a partitioned table cannot have.
    SELECT array_agg(indexdef) INTO index_definitions
      FROM pg_indexes
      WHERE schemaname = current_schema() AND tablename = old_name
        AND indexname NOT IN (t.table_name || '_pkey', 'receipt_step_id_key', 'attempt_step_id_fencing_term_key', 'attempt_one_open_lease_per_step');
    SELECT array_agg(pg_get_triggerdef(oid)) INTO trigger_definitions
      FROM pg_trigger WHERE tgrelid = to_regclass(quote_ident(old_name)) AND NOT tgisinternal;

    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING COMMENTS) PARTITION BY RANGE ("id")',
                   t.table_name, old_name);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN "id" SET DEFAULT fl_uuid_v7()', t.table_name);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (MINVALUE) TO (%L)%s',
                   t.table_name || '_legacy_before', t.table_name, fl_uuid_v7_floor('2020-01-01 00:00:00+00'), t.storage);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (MAXVALUE)%s',
                   t.table_name || '_legacy_after', t.table_name, '04000000-0000-0000-0000-000000000000', t.storage);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT%s', t.table_name || '_default', t.table_name, t.storage);
    PERFORM fl_ensure_safety_partitions_of(t.table_name, t.storage, this_month, now() + interval '2 months');
    EXECUTE format('INSERT INTO %I SELECT * FROM %I', t.table_name, old_name);
    EXECUTE format('DROP TABLE %I', old_name);

    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY ("id")', t.table_name, t.table_name || '_pkey');
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I FOREIGN KEY ("step_id") REFERENCES "step"("id") ON DELETE RESTRICT ON UPDATE CASCADE',
                   t.table_name, t.table_name || '_step_id_fkey');
    FOREACH index_definition IN ARRAY coalesce(index_definitions, '{}') LOOP
      EXECUTE regexp_replace(index_definition, ' ON (ONLY )?\S+ USING ', format(' ON %I USING ', t.table_name));
    END LOOP;
    FOREACH trigger_definition IN ARRAY coalesce(trigger_definitions, '{}') LOOP
      EXECUTE regexp_replace(trigger_definition, ' ON \S+ ', format(' ON %I ', t.table_name));
    END LOOP;
  END LOOP;

  FOREACH view_definition IN ARRAY coalesce(view_definitions, '{}') LOOP
    EXECUTE view_definition;
  END LOOP;
END
$$;

-- What the unique indexes served besides uniqueness, no longer unique (see the header): a lease
-- by step and term (every fenced write), open leases by step, receipts by step.
CREATE INDEX "attempt_step_id_fencing_term_idx" ON "attempt"("step_id", "fencing_term");
CREATE INDEX "attempt_open_lease_step_id_idx" ON "attempt"("step_id") WHERE "ended_at" IS NULL;
CREATE INDEX "receipt_step_id_idx" ON "receipt"("step_id");
