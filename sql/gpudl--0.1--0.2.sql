-- gpudl 0.1 -> 0.2 — upgrade script (CREATE EXTENSION gpudl runs
-- gpudl--0.1.sql, then this).  Each feature of 0.2 has a section of its own.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.2'" to load this file. \quit

-- ===== progress (issue 11)

-- Who runs a learn run: a 'running' row whose transaction is no longer in
-- progress (backend killed, crashed, or the caller rolled back) is stale,
-- and gpudl_learn_runs_sweep() (also run by every gpudl_learn) marks it
-- 'failed'.
ALTER TABLE gpudl.learn_runs
    ADD COLUMN backend_pid   int,
    ADD COLUMN backend_start timestamptz,
    ADD COLUMN backend_xid   xid8;
COMMENT ON COLUMN gpudl.learn_runs.backend_pid IS 'pid of the backend that ran the learn call';
COMMENT ON COLUMN gpudl.learn_runs.backend_start IS 'start time of that backend';
-- the sweep reads only the running rows, however long the history grows
CREATE INDEX learn_runs_running_idx ON gpudl.learn_runs(id) WHERE status = 'running';
COMMENT ON COLUMN gpudl.learn_runs.backend_xid IS 'top transaction of the learn call: while it is in progress the run may finish';

CREATE FUNCTION gpudl_learn_runs_sweep() RETURNS bigint
    AS 'MODULE_PATHNAME', 'gpudl_learn_runs_sweep' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_learn_runs_sweep() IS
    'mark as failed every running learn run whose backend or transaction ended without finishing it; returns how many';

-- The running evaluations and learns of the cluster, one row per backend
-- (every backend's with gpudl in shared_preload_libraries, else only the
-- calling session's own).  Like pg_stat_activity, a role sees the details
-- of its own work (and of roles it is a member of; pg_read_all_stats and
-- superusers see all): other rows show pid, role and database only.
CREATE FUNCTION gpudl._progress(
    OUT pid int, OUT role name, OUT database name, OUT program text, OUT goal text,
    OUT kind text, OUT phase text, OUT stratum int, OUT round bigint, OUT tuples bigint,
    OUT device text, OUT bytes bigint, OUT epoch int, OUT loss float8,
    OUT started timestamptz, OUT elapsed interval)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'gpudl_progress_rows' LANGUAGE C VOLATILE;

CREATE VIEW gpudl_progress AS SELECT * FROM gpudl._progress();
COMMENT ON VIEW gpudl_progress IS
    'running evaluations and learns: pid, role, database, program, goal or target, kind, phase, stratum, round, tuples, device, bytes, epoch, loss, started, elapsed';
GRANT SELECT ON gpudl_progress TO PUBLIC;
