-- Decision 017: a read by step_id (not the partition key) over a year of history in monthly against daily partitions.
-- Run against a scratch server: PGPASSWORD=... psql -h 127.0.0.1 -U postgres -d postgres -f docs/decisions/017-partition-granularity-probe.sql
DROP DATABASE IF EXISTS history_partition_probe;
CREATE DATABASE history_partition_probe;
\c history_partition_probe
CREATE TABLE le_monthly (id bigint generated always as identity, step_id uuid not null, fencing_term bigint not null, at timestamptz not null, primary key (id, at)) PARTITION BY RANGE (at);
CREATE TABLE le_daily (LIKE le_monthly INCLUDING ALL) PARTITION BY RANGE (at);
ALTER TABLE le_daily ADD PRIMARY KEY (id, at);
DO $$ DECLARE d date; BEGIN
  FOR d IN SELECT generate_series(date_trunc('month', now() - interval '365 days'), now() + interval '1 month', interval '1 month')::date LOOP
    EXECUTE format('CREATE TABLE le_monthly_%s PARTITION OF le_monthly FOR VALUES FROM (%L) TO (%L)', to_char(d,'YYYYMM'), d, d + interval '1 month'); END LOOP;
  FOR d IN SELECT generate_series(now()::date - 366, now()::date + 1, interval '1 day')::date LOOP
    EXECUTE format('CREATE TABLE le_daily_%s PARTITION OF le_daily FOR VALUES FROM (%L) TO (%L)', to_char(d,'YYYYMMDD'), d, d + 1); END LOOP;
END $$;
CREATE INDEX ON le_monthly (step_id, fencing_term);
CREATE INDEX ON le_daily (step_id, fencing_term);
INSERT INTO le_monthly (step_id, fencing_term, at) SELECT md5((n/10)::text)::uuid, n%10, now() - (n::float8/1000) * interval '1 day' FROM generate_series(0, 364999) n;
INSERT INTO le_daily (step_id, fencing_term, at) SELECT step_id, fencing_term, at FROM le_monthly;
ANALYZE;
SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'le_monthly'::regclass) AS monthly_partitions, (SELECT count(*) FROM pg_inherits WHERE inhparent = 'le_daily'::regclass) AS daily_partitions;
CREATE FUNCTION probe(t text, n int) RETURNS TABLE (planning_ms numeric, execution_ms numeric) LANGUAGE plpgsql AS $$
DECLARE line text; p numeric[] := '{}'; e numeric[] := '{}'; i int; BEGIN
  FOR i IN 1..n LOOP
    FOR line IN EXECUTE format('EXPLAIN (ANALYZE) SELECT * FROM %I WHERE step_id = %L ORDER BY fencing_term', t, md5((i*37 % 36000)::text)::uuid) LOOP
      IF line LIKE 'Planning Time:%' THEN p := p || substring(line from '([0-9.]+)')::numeric; END IF;
      IF line LIKE 'Execution Time:%' THEN e := e || substring(line from '([0-9.]+)')::numeric; END IF;
    END LOOP; END LOOP;
  RETURN QUERY SELECT (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(p) x), (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(e) x);
END $$;
SELECT 'monthly' AS layout, * FROM probe('le_monthly', 50);
SELECT 'daily' AS layout, * FROM probe('le_daily', 50);
SELECT 'monthly' AS layout, * FROM probe('le_monthly', 50);
SELECT 'daily' AS layout, * FROM probe('le_daily', 50);
\c postgres
DROP DATABASE history_partition_probe;
