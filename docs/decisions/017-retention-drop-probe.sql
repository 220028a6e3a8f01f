-- Decision 017: removing a month of history by DELETE against by dropping its partition (time, WAL).
-- Run against a scratch server: PGPASSWORD=... psql -h 127.0.0.1 -U postgres -d postgres -f docs/decisions/017-retention-drop-probe.sql
DROP DATABASE IF EXISTS history_drop_probe;
CREATE DATABASE history_drop_probe;
\c history_drop_probe
CREATE TABLE le_plain (id bigint generated always as identity primary key, step_id uuid not null, fencing_term bigint not null, at timestamptz not null);
CREATE INDEX ON le_plain (step_id, fencing_term);
CREATE INDEX ON le_plain USING brin (at);
CREATE TABLE le_part (id bigint generated always as identity, step_id uuid not null, fencing_term bigint not null, at timestamptz not null, primary key (id, at)) PARTITION BY RANGE (at);
CREATE TABLE le_part_old PARTITION OF le_part FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE le_part_new PARTITION OF le_part FOR VALUES FROM ('2026-02-01') TO ('2027-01-01');
CREATE INDEX ON le_part (step_id, fencing_term);
CREATE INDEX ON le_part USING brin (at);
INSERT INTO le_plain (step_id, fencing_term, at) SELECT gen_random_uuid(), n % 10, timestamptz '2026-01-01' + (n % 31) * interval '1 day' FROM generate_series(1, 300000) n;
INSERT INTO le_plain (step_id, fencing_term, at) SELECT gen_random_uuid(), n % 10, timestamptz '2026-03-01' FROM generate_series(1, 100000) n;
INSERT INTO le_part (step_id, fencing_term, at) SELECT step_id, fencing_term, at FROM le_plain;
VACUUM ANALYZE;
CHECKPOINT;
\timing on
SELECT pg_current_wal_insert_lsn() AS before_delete \gset
DELETE FROM le_plain WHERE at < '2026-02-01';
SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'before_delete')) AS delete_wal;
SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'le_plain';
SELECT pg_current_wal_insert_lsn() AS before_drop \gset
DROP TABLE le_part_old;
SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'before_drop')) AS drop_wal;
\timing off
\c postgres
DROP DATABASE history_drop_probe;
