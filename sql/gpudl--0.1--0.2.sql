/* gpudl 0.1 -> 0.2: see each section's heading */
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.2'" to load this file. \quit

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
