-- 32_progress: the gpudl_progress view and the bookkeeping that keeps
-- gpudl.learn_runs from holding 'running' rows of runs that ended
-- (test/t/09_progress.sh and 08_killed_learn.sh watch them from other
-- sessions).
SET client_min_messages = warning;

-- the view's columns; nothing runs now
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'gpudl_progress'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) FROM gpudl_progress WHERE pid = pg_backend_pid();
SELECT has_table_privilege('public', 'gpudl_progress', 'SELECT') AS readable_by_everyone;

-- a learn run records its backend and transaction
CREATE TABLE pr_parent(p text, c text);
INSERT INTO pr_parent VALUES ('a', 'b'), ('b', 'c'), ('c', 'd'), ('d', 'e'), ('e', 'f');
CREATE TABLE pr_gp AS SELECT x.p, y.c FROM pr_parent x JOIN pr_parent y ON x.c = y.p;
SELECT gpudl_create_program('pr', 'kid(X, Y) :- pr_parent(Y, X).');
SELECT count(*) > 0 AS learned FROM gpudl_learn('pr', 'gp', 'pr_gp');
SELECT status, backend_pid = pg_backend_pid() AS own_pid, backend_start IS NOT NULL AS has_start,
       backend_xid IS NOT NULL AS has_xid, device IN ('cpu', 'gpu') AS device_named
FROM gpudl.learn_runs WHERE program = 'pr';

-- a run of a backend that is gone: the sweep closes it, once
INSERT INTO gpudl.learn_runs(program, target, status, backend_pid, backend_xid)
VALUES ('pr', 'ghost', 'running', 0, '1'::xid8);
SELECT gpudl_learn_runs_sweep() AS swept;
SELECT gpudl_learn_runs_sweep() AS swept_again;
SELECT status, message, finished_at IS NOT NULL AS finished
FROM gpudl.learn_runs WHERE target = 'ghost';
-- the run of this very transaction is running: left alone
BEGIN;
INSERT INTO gpudl.learn_runs(program, target, status, backend_pid, backend_xid)
VALUES ('pr', 'alive', 'running', pg_backend_pid(), pg_current_xact_id());
SELECT gpudl_learn_runs_sweep() AS swept_alive;
ROLLBACK;
SELECT gpudl_drop_program('pr');
