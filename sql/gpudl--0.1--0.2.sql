-- gpudl 0.1 -> 0.2 — update script.
--
-- CREATE EXTENSION gpudl runs gpudl--0.1.sql and then this script (the
-- pg_stat_statements way), so a new install and an updated 0.1 install are
-- the same.  Each change is a section of its own; append new sections at
-- the end.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.2'" to load this file. \quit

-- ===== ownership and privileges (issue 11)
--
-- Programs are modelled on PostgreSQL's own objects: gpudl.programs.owner is
-- the owning role (the creator), gpudl.programs.acl holds the grants made
-- with gpudl_grant (aclitem[], like pg_class.relacl; 'use' is stored as
-- USAGE, 'modify' as UPDATE).  Row-level security on the catalog tables
-- enforces the same rules on direct DML as the gpudl_* functions do; BEFORE
-- ROW triggers refuse a change to a visible row with 42501 naming the owner.
-- Program rows themselves stay readable by everyone (like pg_class); the
-- rules and bindings of a program only by those who may use it.
--
-- Existing programs and learn runs get the extension's owner (a superuser)
-- as owner and run_by: 0.1 did not record who created them.
--
-- pg_dump keeps owners and grants: they are columns of gpudl.programs and
-- gpudl.learn_runs, which (with every other user-data table) stay
-- registered with pg_extension_config_dump by 0.1; regrole and aclitem are
-- dumped as role names, so a restore needs the roles (pg_dumpall -g).  A
-- new user-data table must be registered too.

ALTER TABLE gpudl.programs ADD COLUMN owner regrole, ADD COLUMN acl aclitem[];
UPDATE gpudl.programs
   SET owner = (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname = 'gpudl');
ALTER TABLE gpudl.programs
    ALTER COLUMN owner SET DEFAULT pg_catalog.to_regrole(pg_catalog.quote_ident(current_user)),
    ALTER COLUMN owner SET NOT NULL;
COMMENT ON COLUMN gpudl.programs.owner IS 'the owning role: may change, drop and grant the program';
COMMENT ON COLUMN gpudl.programs.acl IS 'grants of gpudl_grant: U = use, w = modify (NULL: none)';

ALTER TABLE gpudl.learn_runs ADD COLUMN run_by regrole;
UPDATE gpudl.learn_runs
   SET run_by = (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname = 'gpudl');
ALTER TABLE gpudl.learn_runs
    ALTER COLUMN run_by SET DEFAULT pg_catalog.to_regrole(pg_catalog.quote_ident(current_user)),
    ALTER COLUMN run_by SET NOT NULL;
COMMENT ON COLUMN gpudl.learn_runs.run_by IS 'the role that ran gpudl_learn';

-- The predicate of the policies: may the current user 'own', 'use' or
-- 'modify' a program with this owner and ACL?  Superusers and members of
-- the owner role may do everything.
CREATE FUNCTION gpudl._acl_allows(owner regrole, acl aclitem[], privilege text)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'gpudl_acl_allows' LANGUAGE C STABLE PARALLEL SAFE;

-- Ownership on gpudl.programs; 'modify' on the program of a rules or
-- bindings row (and a readable table for a binding).
CREATE FUNCTION gpudl._programs_check() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_programs_check' LANGUAGE C;
CREATE FUNCTION gpudl._program_row_check() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_program_row_check' LANGUAGE C;

-- BEFORE triggers fire in name order: the privilege check comes before the
-- parse of rules_check_row, so a refused row is never parsed.
CREATE TRIGGER programs_check_privilege BEFORE INSERT OR UPDATE OR DELETE ON gpudl.programs
    FOR EACH ROW EXECUTE FUNCTION gpudl._programs_check();
CREATE TRIGGER rules_check_privilege BEFORE INSERT OR UPDATE OR DELETE ON gpudl.rules
    FOR EACH ROW EXECUTE FUNCTION gpudl._program_row_check();
CREATE TRIGGER bindings_check_privilege BEFORE INSERT OR UPDATE OR DELETE ON gpudl.bindings
    FOR EACH ROW EXECUTE FUNCTION gpudl._program_row_check();

ALTER TABLE gpudl.programs ENABLE ROW LEVEL SECURITY;
ALTER TABLE gpudl.rules ENABLE ROW LEVEL SECURITY;
ALTER TABLE gpudl.bindings ENABLE ROW LEVEL SECURITY;
ALTER TABLE gpudl.learn_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE gpudl.learned_rules ENABLE ROW LEVEL SECURITY;

-- programs: everyone sees every program (name, owner, grants); creating one
-- for another role, changing or dropping one needs ownership (the trigger
-- says so with 42501; the policies are the second line).
CREATE POLICY programs_select ON gpudl.programs FOR SELECT USING (true);
CREATE POLICY programs_insert ON gpudl.programs FOR INSERT
    WITH CHECK (gpudl._acl_allows(owner, NULL, 'own'));
CREATE POLICY programs_update ON gpudl.programs FOR UPDATE
    USING (true) WITH CHECK (gpudl._acl_allows(owner, NULL, 'own'));
CREATE POLICY programs_delete ON gpudl.programs FOR DELETE USING (true);

-- rules and bindings: visible to those who may use the program, written by
-- those who may modify it.  Rows of a program one may not use are not
-- there for that role: its UPDATE or DELETE touches none of them.
CREATE POLICY rules_select ON gpudl.rules FOR SELECT
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = rules.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')));
CREATE POLICY rules_insert ON gpudl.rules FOR INSERT
    WITH CHECK (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = rules.program
                        AND gpudl._acl_allows(p.owner, p.acl, 'modify')));
CREATE POLICY rules_update ON gpudl.rules FOR UPDATE
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = rules.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')))
    WITH CHECK (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = rules.program
                        AND gpudl._acl_allows(p.owner, p.acl, 'modify')));
CREATE POLICY rules_delete ON gpudl.rules FOR DELETE
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = rules.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')));

CREATE POLICY bindings_select ON gpudl.bindings FOR SELECT
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = bindings.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')));
CREATE POLICY bindings_insert ON gpudl.bindings FOR INSERT
    WITH CHECK (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = bindings.program
                        AND gpudl._acl_allows(p.owner, p.acl, 'modify')));
CREATE POLICY bindings_update ON gpudl.bindings FOR UPDATE
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = bindings.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')))
    WITH CHECK (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = bindings.program
                        AND gpudl._acl_allows(p.owner, p.acl, 'modify')));
CREATE POLICY bindings_delete ON gpudl.bindings FOR DELETE
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = bindings.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')));

-- learn history: a run is seen by the role that ran it (and roles with its
-- privileges), the program's owner and superusers; a role records runs
-- only as itself.  Learned rules follow their run.
CREATE POLICY learn_runs_select ON gpudl.learn_runs FOR SELECT
    USING (gpudl._acl_allows(run_by, NULL, 'own')
           OR EXISTS (SELECT FROM gpudl.programs p WHERE p.name = learn_runs.program
                      AND gpudl._acl_allows(p.owner, NULL, 'own')));
CREATE POLICY learn_runs_insert ON gpudl.learn_runs FOR INSERT
    WITH CHECK (gpudl._acl_allows(run_by, NULL, 'own'));
CREATE POLICY learn_runs_update ON gpudl.learn_runs FOR UPDATE
    USING (gpudl._acl_allows(run_by, NULL, 'own'))
    WITH CHECK (gpudl._acl_allows(run_by, NULL, 'own'));
CREATE POLICY learn_runs_delete ON gpudl.learn_runs FOR DELETE
    USING (gpudl._acl_allows(run_by, NULL, 'own')
           OR EXISTS (SELECT FROM gpudl.programs p WHERE p.name = learn_runs.program
                      AND gpudl._acl_allows(p.owner, NULL, 'own')));
CREATE POLICY learned_rules_all ON gpudl.learned_rules FOR ALL
    USING (EXISTS (SELECT FROM gpudl.learn_runs r WHERE r.id = learned_rules.run_id))
    WITH CHECK (EXISTS (SELECT FROM gpudl.learn_runs r WHERE r.id = learned_rules.run_id
                        AND gpudl._acl_allows(r.run_by, NULL, 'own')));

-- The grants of each program, one row per grantee and privilege.
CREATE VIEW gpudl.program_privileges WITH (security_invoker = true) AS
SELECT p.name AS program, p.owner,
       CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END AS grantee,
       CASE a.privilege_type WHEN 'USAGE' THEN 'use' WHEN 'UPDATE' THEN 'modify' END AS privilege,
       a.grantor::regrole AS grantor
FROM gpudl.programs p, pg_catalog.aclexplode(p.acl) a;
COMMENT ON VIEW gpudl.program_privileges IS 'grants on programs (gpudl_grant), one row per grantee and privilege';
GRANT SELECT ON gpudl.program_privileges TO PUBLIC;

CREATE FUNCTION gpudl_grant(program text, role text, privilege text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_grant' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_grant(text, text, text) IS
    'let a role (or PUBLIC) use (query, read, learn) or modify (also change rules, bind, commit) a program';

CREATE FUNCTION gpudl_revoke(program text, role text, privilege text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_revoke' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_revoke(text, text, text) IS
    'take back a privilege granted with gpudl_grant (revoking use revokes modify too)';

-- the same with the role as a regrole ('bob'::regrole, current_user::regrole);
-- a quoted literal picks the text version, which also takes PUBLIC
CREATE FUNCTION gpudl_grant(program text, role regrole, privilege text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_grant' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_grant(text, regrole, text) IS
    'gpudl_grant with the role as a regrole';
CREATE FUNCTION gpudl_revoke(program text, role regrole, privilege text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_revoke' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_revoke(text, regrole, text) IS
    'gpudl_revoke with the role as a regrole';

-- SECURITY DEFINER functions of 0.1: temporary objects searched last
ALTER FUNCTION gpudl._cache_register(oid) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION gpudl._cache_invalidate() SET search_path = pg_catalog, pg_temp;

-- ===== GPU service (issue 10)

-- every run waiting for or holding device or host memory (gpudl preloaded)
CREATE FUNCTION gpudl._gpu_jobs(
    OUT pid int, OUT usesysid oid, OUT resource text, OUT state text,
    OUT program text, OUT goal text, OUT phase text, OUT need_bytes bigint,
    OUT granted_bytes bigint, OUT waited_ms float8, OUT attempts int,
    OUT since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpudl_gpu_jobs' LANGUAGE C VOLATILE;

CREATE VIEW gpudl_gpu_jobs AS
    SELECT j.pid, r.rolname AS usename, j.resource, j.state, j.program, j.goal,
           j.phase, j.need_bytes, j.granted_bytes, j.waited_ms, j.attempts, j.since
      FROM gpudl._gpu_jobs() j LEFT JOIN pg_catalog.pg_roles r ON r.oid = j.usesysid;
COMMENT ON VIEW gpudl_gpu_jobs IS 'runs waiting for or holding memory of the GPU service''s budgets, like pg_stat_activity';
GRANT SELECT ON gpudl_gpu_jobs TO PUBLIC;

CREATE FUNCTION gpudl_service_status(
    OUT state text, OUT pid int, OUT device text,
    OUT device_budget_bytes bigint, OUT device_committed_bytes bigint,
    OUT host_budget_bytes bigint, OUT host_committed_bytes bigint,
    OUT running int, OUT waiting int, OUT slots int, OUT generation bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'gpudl_service_status' LANGUAGE C VOLATILE;

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
