-- gpudl 0.6 -> 0.7: derived tables kept fresh (issue 24).
-- gpudl_materialize(..., mode => 'maintain') keeps a target table equal to
-- the derived relation after every change of the program's base tables,
-- inside the changing statement's transaction (src/pg/maint_*.c).  Nothing
-- a 0.6 user has changes: programs, rules, bindings, grants, learn runs,
-- mined rules and every function's results stay as they are.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.7'" to load this file. \quit

-- One row per maintained target.  Written only by gpudl's functions (as the
-- catalog's owner); everyone may read it through gpudl.maintained.
CREATE TABLE gpudl.maintained_targets (
    target          regclass PRIMARY KEY,
    program         text NOT NULL REFERENCES gpudl.programs(name) ON DELETE CASCADE,
    predicate       text NOT NULL,
    strategy        text NOT NULL CHECK (strategy IN ('incremental', 'recompute')),
    why_recompute   text,
    maintained_by   regrole NOT NULL,
    search_path     text NOT NULL,
    program_version bigint NOT NULL,
    base_tables     regclass[] NOT NULL,
    rows            bigint NOT NULL DEFAULT 0,
    changes         bigint NOT NULL DEFAULT 0,
    last_change     timestamptz,
    last_change_ms  float8,
    last_change_rows bigint,
    last_refresh    timestamptz NOT NULL DEFAULT now(),
    last_refresh_ms float8
);
CREATE INDEX maintained_targets_base_idx ON gpudl.maintained_targets USING gin (base_tables);
COMMENT ON TABLE gpudl.maintained_targets IS
    'tables gpudl_materialize(..., mode => ''maintain'') keeps equal to a derived relation';
SELECT pg_catalog.pg_extension_config_dump('gpudl.maintained_targets', '');
GRANT SELECT ON gpudl.maintained_targets TO PUBLIC;

CREATE VIEW gpudl.maintained AS
    SELECT target, program, predicate, strategy AS mode, why_recompute, maintained_by,
           rows, changes, last_change, last_change_ms, last_change_rows,
           last_refresh, last_refresh_ms, base_tables
      FROM gpudl.maintained_targets;
COMMENT ON VIEW gpudl.maintained IS
    'maintained tables: program, predicate, how changes are applied, rows, the cost of the last change and the last full refresh';
GRANT SELECT ON gpudl.maintained TO PUBLIC;

-- The statement-level trigger gpudl puts on every base table of a
-- maintained target (INSERT, UPDATE, DELETE with transition tables, TRUNCATE).
CREATE FUNCTION gpudl._maintain() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_maintain_trigger' LANGUAGE C;
-- Its BEFORE ... FOR EACH STATEMENT twin: the table is changing until then
-- (targets are updated from all their base tables' changes at once).
CREATE FUNCTION gpudl._maintain_begin() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_maintain_begin' LANGUAGE C;

-- On a maintained target: only gpudl writes it.
CREATE FUNCTION gpudl._maintained_guard() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_maintained_guard' LANGUAGE C;

-- Forget a maintained target when it, or one of its base tables, is dropped.
CREATE FUNCTION gpudl._maintained_on_drop() RETURNS event_trigger
    AS 'MODULE_PATHNAME', 'gpudl_maintained_on_drop' LANGUAGE C;
CREATE EVENT TRIGGER gpudl_maintained_on_drop ON sql_drop
    EXECUTE FUNCTION gpudl._maintained_on_drop();

CREATE FUNCTION gpudl_refresh(target regclass) RETURNS bigint
    AS 'MODULE_PATHNAME', 'gpudl_refresh' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_refresh(regclass) IS
    'recompute a maintained table fully from its program; returns its rows';

COMMENT ON FUNCTION gpudl_materialize(text, text, text, text) IS
    'write a derived relation into a table (created when missing); mode replace, append or maintain (kept equal under changes of the base tables); returns rows written';

-- After maintenance of a table stops (its program, it or a base table was
-- dropped): say so, and take gpudl's triggers off tables nothing reads.
CREATE FUNCTION gpudl._maintained_forget() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_maintained_forget' LANGUAGE C;
CREATE TRIGGER maintained_forget AFTER DELETE ON gpudl.maintained_targets
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintained_forget();
