-- gpudl 0.5 -> 0.6: knowledge graphs kept between calls (issue 21).  A
-- session keeps the last graph gpudl_predict or gpudl_mine read, with the
-- stored rules it parsed, while the program, its tables and the stored
-- rules stay the same (src/pg/pg_kg_cache.c).  Nothing a 0.5 user has
-- changes: programs, rules, bindings, grants, learn runs and mined rules
-- stay as they are, and every call returns what it returned.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.6'" to load this file. \quit

-- The changes of gpudl.mined_rules are counted like a loaded table's (the
-- trigger gpudl_load puts on a table), so that rules parsed by one call
-- are used by the next only while no rule was stored, changed or deleted.
SELECT gpudl._cache_register('gpudl.mined_rules'::regclass);
CREATE TRIGGER gpudl_cache_invalidate AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON gpudl.mined_rules FOR EACH STATEMENT EXECUTE FUNCTION gpudl._cache_invalidate();

-- The graph this session keeps for the caller (no row: none).
CREATE FUNCTION gpudl_kg_cache_status(
    OUT program text, OUT entity_type text, OUT relations int, OUT entities bigint,
    OUT facts bigint, OUT rules bigint, OUT bytes bigint, OUT hits bigint,
    OUT built_at timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'gpudl_kg_cache_status' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_kg_cache_status() IS
    'the knowledge graph this session keeps between gpudl_predict and gpudl_mine calls: program, entity type, size, stored rules parsed, bytes, calls that reused it';
