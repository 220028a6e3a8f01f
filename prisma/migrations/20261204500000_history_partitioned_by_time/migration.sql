-- History partitioned by time (docs/decisions/017-history-by-partition-and-reads-off-the-primary.md).
-- lease_event, fencing_rejection, late_observation and recovery_decision only grow: each becomes a
-- table partitioned by month on its time column, so retention drops a month as one file instead
-- of deleting rows one by one (dead tuples, vacuum, WAL), and a claim's insert lands in the
-- current month's small indexes whatever the history holds.
--
-- Written to be independent of the tables' exact columns, so a migration that runs before this
-- one may change them: each new table copies the old one's columns (LIKE), its indexes (from
-- pg_indexes) and its rows (SELECT *). Only the primary key is named here: a partitioned table's
-- must include the partition key, so it is (id, <time column>). No foreign key points at these
-- tables (fencing_rejection.late_observation_id is a plain value), so none needs changing.

-- Creates the monthly partitions of one history table from p_from's month through p_through's.
-- A row that arrives before its month's partition exists lands in the table's default partition
-- (so a lapse in maintenance never refuses a claim's insert); creating that month's partition
-- moves such rows into it.
CREATE FUNCTION "fl_ensure_history_partitions_of"("p_table" TEXT, "p_column" TEXT, "p_from" TIMESTAMPTZ, "p_through" TIMESTAMPTZ)
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
  -- Rows in the default partition get their months too, however old, so retention can drop them.
  EXECUTE format('SELECT min(%I) FROM %I', p_column, default_name) INTO earliest_stray;
  month := date_trunc('month', least(p_from, coalesce(earliest_stray, p_from)), 'UTC');
  WHILE month <= p_through LOOP
    partition_name := p_table || '_' || to_char(month AT TIME ZONE 'UTC', 'YYYY_MM');
    IF to_regclass(quote_ident(partition_name)) IS NULL THEN
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', default_name, p_column, p_column)
        INTO stray USING month, month + interval '1 month';
      IF stray THEN
        EXECUTE format('CREATE TEMP TABLE fl_partition_move ON COMMIT DROP AS SELECT * FROM %I WHERE %I >= $1 AND %I < $2',
                       default_name, p_column, p_column) USING month, month + interval '1 month';
        PERFORM set_config('fenceline.retention', 'on', true);
        EXECUTE format('DELETE FROM %I WHERE %I >= $1 AND %I < $2', default_name, p_column, p_column)
          USING month, month + interval '1 month';
        PERFORM set_config('fenceline.retention', 'off', true);
      END IF;
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                     partition_name, p_table, month, month + interval '1 month');
      IF stray THEN
        EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM fl_partition_move', p_table);
        DROP TABLE fl_partition_move;
      END IF;
      RETURN NEXT partition_name;
    END IF;
    month := month + interval '1 month';
  END LOOP;
END
$$;

-- The history tables and their time columns, in one place for maintenance and retention.
CREATE FUNCTION "fl_history_tables"()
  RETURNS TABLE ("table_name" TEXT, "time_column" TEXT)
  LANGUAGE sql IMMUTABLE
  AS $$
  VALUES ('lease_event', 'at'), ('fencing_rejection', 'at'), ('late_observation', 'at'), ('recovery_decision', 'decided_at')
$$;

-- Every history table's partitions from p_from's month through p_through's; returns those created.
CREATE FUNCTION "fl_ensure_history_partitions"("p_from" TIMESTAMPTZ, "p_through" TIMESTAMPTZ)
  RETURNS SETOF TEXT
  LANGUAGE sql
  AS $$
  SELECT created FROM fl_history_tables() h, fl_ensure_history_partitions_of(h.table_name, h.time_column, p_from, p_through) created
$$;

-- Retention: drops every monthly partition of the history tables that ended before p_before and
-- holds no row of a step that is not settled for good (its state not in p_settled_states, or an
-- open review case on it): recovery and people decide from that evidence, so such a partition
-- stays until its last step settles. Returns each expired partition, whether it went, and how
-- many unsettled steps hold it otherwise.
CREATE FUNCTION "fl_drop_expired_history_partitions"("p_before" TIMESTAMPTZ, "p_settled_states" TEXT[])
  RETURNS TABLE ("table_name" TEXT, "partition_name" TEXT, "rows" BIGINT, "held_by_steps" BIGINT, "dropped" BOOLEAN)
  LANGUAGE plpgsql
  AS $$
DECLARE
  p RECORD;
BEGIN
  FOR p IN
    SELECT h.table_name AS parent, c.relname::text AS child,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz AS upper_bound
    FROM fl_history_tables() h
    JOIN pg_inherits i ON i.inhparent = to_regclass(quote_ident(h.table_name))
    JOIN pg_class c ON c.oid = i.inhrelid
    WHERE pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
    ORDER BY 1, 3
  LOOP
    CONTINUE WHEN p.upper_bound > p_before;
    table_name := p.parent;
    partition_name := p.child;
    EXECUTE format('SELECT count(*) FROM %I', p.child) INTO "rows";
    EXECUTE format(
      'SELECT count(DISTINCT t.step_id) FROM %I t JOIN step s ON s.id = t.step_id
       WHERE s.state::text <> ALL ($1) OR EXISTS (SELECT 1 FROM review_case c WHERE c.step_id = s.id AND c.status = ''open'')',
      p.child) INTO held_by_steps USING p_settled_states;
    dropped := held_by_steps = 0;
    IF dropped THEN
      EXECUTE format('DROP TABLE %I', p.child);
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

DO $$
DECLARE
  h RECORD;
  old_name TEXT;
  index_definition TEXT;
  index_definitions TEXT[];
  earliest TIMESTAMPTZ;
  next_id BIGINT;
  view_definitions TEXT[];
  view_definition TEXT;
  view_names TEXT[];
  view_name TEXT;
BEGIN
  -- Views over a history table (lease_history) would follow the renamed table and then block its
  -- drop: each is dropped here and made again from its own definition over the new table.
  SELECT array_agg(format('CREATE VIEW %I AS %s', v.relname, pg_get_viewdef(v.oid))), array_agg(v.relname::text)
    INTO view_definitions, view_names
    FROM pg_class v
    WHERE v.relkind = 'v' AND v.relnamespace = current_schema()::regnamespace
      AND EXISTS (SELECT 1 FROM pg_rewrite r JOIN pg_depend d ON d.objid = r.oid
                  WHERE r.ev_class = v.oid AND d.refobjid IN (SELECT to_regclass(quote_ident(t.table_name)) FROM fl_history_tables() t));
  FOREACH view_name IN ARRAY coalesce(view_names, '{}') LOOP
    EXECUTE format('DROP VIEW %I', view_name);
  END LOOP;

  FOR h IN SELECT * FROM fl_history_tables() LOOP
    old_name := h.table_name || '_unpartitioned';
    EXECUTE format('ALTER TABLE %I RENAME TO %I', h.table_name, old_name);
    SELECT array_agg(indexdef) INTO index_definitions
      FROM pg_indexes
      WHERE schemaname = current_schema() AND tablename = old_name AND indexname <> h.table_name || '_pkey';

    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING COMMENTS) PARTITION BY RANGE (%I)',
                   h.table_name, old_name, h.time_column);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', h.table_name || '_default', h.table_name);

    EXECUTE format('SELECT min(%I) FROM %I', h.time_column, old_name) INTO earliest;
    PERFORM fl_ensure_history_partitions_of(h.table_name, h.time_column, least(coalesce(earliest, now()), now()), now() + interval '2 months');
    EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM %I', h.table_name, old_name);

    -- The new identity starts where the old one stood, so no id is issued twice.
    EXECUTE format('SELECT coalesce(max("id"), 0) + 1 FROM %I', old_name) INTO next_id;
    EXECUTE format('ALTER TABLE %I ALTER COLUMN "id" RESTART WITH %s', h.table_name, next_id);

    EXECUTE format('DROP TABLE %I', old_name);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY ("id", %I)', h.table_name, h.table_name || '_pkey', h.time_column);
    -- The old indexes' names are free now; each is rebuilt on the partitioned table (and so on
    -- every partition), whatever columns it covers.
    FOREACH index_definition IN ARRAY coalesce(index_definitions, '{}') LOOP
      EXECUTE regexp_replace(index_definition, ' ON (ONLY )?\S+ USING ', format(' ON %I USING ', h.table_name));
    END LOOP;

    -- History stays append-only; dropping a whole partition is how retention removes it now.
    EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION fl_forbid_history_change()',
                   h.table_name || '_append_only', h.table_name);
  END LOOP;

  FOREACH view_definition IN ARRAY coalesce(view_definitions, '{}') LOOP
    EXECUTE view_definition;
  END LOOP;
END
$$;
