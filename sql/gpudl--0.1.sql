-- gpudl 0.1 — install script.
--
-- User-facing functions go to the schema the extension is created in
-- (@extschema@); the catalog lives in schema gpudl, as TimescaleDB does.
\echo Use "CREATE EXTENSION gpudl" to load this file. \quit

CREATE SCHEMA gpudl;
GRANT USAGE ON SCHEMA gpudl TO PUBLIC;

---------------------------------------------------------------- catalog

CREATE TABLE gpudl.programs (
    name        text PRIMARY KEY CHECK (name <> ''),
    description text,
    version     bigint NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE gpudl.programs IS 'named Datalog programs; version bumps on every rule change';

CREATE TABLE gpudl.rules (
    id          bigserial PRIMARY KEY,
    program     text NOT NULL REFERENCES gpudl.programs(name) ON DELETE CASCADE,
    rule        text NOT NULL,
    head        text,
    learned     boolean NOT NULL DEFAULT false,
    enabled     boolean NOT NULL DEFAULT true,
    weight      float8,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rules_program_idx ON gpudl.rules(program, id);
COMMENT ON TABLE gpudl.rules IS 'one clause (rule, fact or .decl) of a program per row';

CREATE TABLE gpudl.bindings (
    program     text NOT NULL REFERENCES gpudl.programs(name) ON DELETE CASCADE,
    predicate   text NOT NULL,
    relation    regclass NOT NULL,
    columns     name[],
    PRIMARY KEY (program, predicate)
);
COMMENT ON TABLE gpudl.bindings IS 'explicit predicate-to-table mappings';

CREATE TABLE gpudl.learn_runs (
    id          bigserial PRIMARY KEY,
    program     text NOT NULL,
    target      text NOT NULL,
    status      text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    device      text,
    params      jsonb,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    epochs      int,
    final_loss  float8,
    message     text
);
COMMENT ON TABLE gpudl.learn_runs IS 'one gpudl_learn call per row, failed ones included';

CREATE TABLE gpudl.learned_rules (
    run_id          bigint NOT NULL REFERENCES gpudl.learn_runs(id) ON DELETE CASCADE,
    rank            int NOT NULL,
    rule            text NOT NULL,
    probability     float8,
    loss            float8,
    precision       float8,
    recall          float8,
    support         bigint,
    head_coverage   float8,
    std_confidence  float8,
    pca_confidence  float8,
    committed       boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, rank)
);
COMMENT ON TABLE gpudl.learned_rules IS 'the result rows of each gpudl_learn run';

-- pg_dump keeps the user's programs, rules, bindings and learning history
SELECT pg_catalog.pg_extension_config_dump('gpudl.programs', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.rules', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.rules_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.bindings', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.learn_runs', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.learn_runs_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.learned_rules', '');

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA gpudl TO PUBLIC;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA gpudl TO PUBLIC;

------------------------------------------------- catalog integrity (C)

-- Parses one rules row (exactly one clause or .decl) and fills in its head.
CREATE FUNCTION gpudl._rules_check_row() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_rules_check_row' LANGUAGE C;

-- After any change to gpudl.rules: validate each touched program as a
-- whole (names, arities, types, safety, strata) and bump its version.
CREATE FUNCTION gpudl._rules_after_change() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_rules_after_change' LANGUAGE C;

-- After a change to gpudl.bindings: validate and bump the program version.
CREATE FUNCTION gpudl._bindings_after_change() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_bindings_after_change' LANGUAGE C;

CREATE TRIGGER rules_check_row BEFORE INSERT OR UPDATE ON gpudl.rules
    FOR EACH ROW EXECUTE FUNCTION gpudl._rules_check_row();
CREATE TRIGGER rules_after_insert AFTER INSERT ON gpudl.rules
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION gpudl._rules_after_change();
CREATE TRIGGER rules_after_update AFTER UPDATE ON gpudl.rules
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION gpudl._rules_after_change();
CREATE TRIGGER rules_after_delete AFTER DELETE ON gpudl.rules
    REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION gpudl._rules_after_change();
CREATE TRIGGER bindings_after_insert AFTER INSERT ON gpudl.bindings
    REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION gpudl._bindings_after_change();
CREATE TRIGGER bindings_after_update AFTER UPDATE ON gpudl.bindings
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION gpudl._bindings_after_change();
CREATE TRIGGER bindings_after_delete AFTER DELETE ON gpudl.bindings
    REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION gpudl._bindings_after_change();

------------------------------------------------------- program management

CREATE FUNCTION gpudl_create_program(name text, rules text DEFAULT NULL,
                                     description text DEFAULT NULL)
    RETURNS text
    AS 'MODULE_PATHNAME', 'gpudl_create_program' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_create_program(text, text, text) IS
    'create a named Datalog program, optionally with its rules';

CREATE FUNCTION gpudl_add_rules(program text, rules text)
    RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'gpudl_add_rules' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_add_rules(text, text) IS
    'add clauses to a program; returns the ids of the new gpudl.rules rows';

CREATE FUNCTION gpudl_drop_program(name text)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_drop_program' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_drop_program(text) IS
    'drop a program with its rules and bindings';

CREATE FUNCTION gpudl_bind(program text, predicate text, relation regclass,
                           columns name[] DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_bind' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_bind(text, text, regclass, name[]) IS
    'map an extensional predicate of a program to a table (and its columns)';

CREATE FUNCTION gpudl_explain(program text)
    RETURNS SETOF text
    AS 'MODULE_PATHNAME', 'gpudl_explain' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_explain(text) IS
    'strata, rule order and join plan of a program';

-------------------------------------------------------------- evaluation

CREATE FUNCTION gpudl_query(program text, goal text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'gpudl_query' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_query(text, text) IS
    'answers of a goal, e.g. SELECT * FROM gpudl_query(''p'', ''anc(X, Y)'') AS t(a text, b text)';

CREATE FUNCTION gpudl_count(program text, goal text)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'gpudl_count' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_count(text, text) IS
    'number of answers of a goal; no tuple leaves the engine';

CREATE FUNCTION gpudl_materialize(program text, predicate text, target text,
                                  mode text DEFAULT 'replace')
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'gpudl_materialize' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_materialize(text, text, text, text) IS
    'write a derived relation into a table (created when missing); returns rows written';

CREATE FUNCTION gpudl_stats()
    RETURNS TABLE(name text, value bigint)
    AS 'MODULE_PATHNAME', 'gpudl_stats' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_stats() IS
    'plan cache hits and misses, run counters, last run''s iterations and phase times';

CREATE FUNCTION gpudl_device_info()
    RETURNS TABLE(backend text, device text, memory_total bigint, memory_free bigint)
    AS 'MODULE_PATHNAME', 'gpudl_device_info' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_device_info() IS
    'the devices gpudl can run on: the CPU, and the GPU when one works';

---------------------------------------------------------- rule learning

CREATE FUNCTION gpudl_learn(
    program text, target text, positives text, negatives text DEFAULT NULL,
    max_body int DEFAULT 2, max_rules int DEFAULT 32, epochs int DEFAULT 200,
    learning_rate float8 DEFAULT 0.1, allow_recursive boolean DEFAULT false,
    min_support int DEFAULT 1, seed int DEFAULT 0, commit boolean DEFAULT false,
    negative_sampling text DEFAULT 'pca')
    RETURNS TABLE(rank int, rule text, probability float8, loss float8,
                  "precision" float8, recall float8, support bigint,
                  head_coverage float8, std_confidence float8, pca_confidence float8)
    AS 'MODULE_PATHNAME', 'gpudl_learn' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_learn(text, text, text, text, int, int, int, float8, boolean, int, int, boolean, text) IS
    'learn rules for target from example rows; ranked, with losses and confidence measures (negative_sampling: pca or closed_world, when negatives is NULL)';

CREATE FUNCTION gpudl_candidates(program text, target text, arity int,
                                 max_body int DEFAULT 2, allow_recursive boolean DEFAULT false)
    RETURNS TABLE(id int, rule text, template text)
    AS 'MODULE_PATHNAME', 'gpudl_candidates' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_candidates(text, text, int, int, boolean) IS
    'the candidate rules of the learning bias, with deterministic ids';

CREATE FUNCTION gpudl_loss_grad(program text, target text, positives text, negatives text,
                                probabilities float8[])
    RETURNS TABLE(loss float8, grad float8[])
    AS 'MODULE_PATHNAME', 'gpudl_loss_grad' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_loss_grad(text, text, text, text, float8[]) IS
    'noisy-or loss of the candidates (max_body 2) at given probabilities, and its gradient';

CREATE FUNCTION gpudl_commit_rule(program text, rule text)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'gpudl_commit_rule' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_commit_rule(text, text) IS
    'store a (learned) rule in a program, validated; returns its id';

CREATE FUNCTION gpudl_sample_false_positives(program text, goal text, exclude text, max_n int)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'gpudl_sample_false_positives' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_sample_false_positives(text, text, text, int) IS
    'answers of a goal not in a set of known facts (a query or table), at most max_n';

CREATE FUNCTION gpudl_derivations(program text, fact text)
    RETURNS TABLE(rule_id bigint, rule text)
    AS 'MODULE_PATHNAME', 'gpudl_derivations' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_derivations(text, text) IS
    'the rules of a program that derive a ground fact, e.g. ''path(1, 7)''';

------------------------------------------------------------ GpuDatalog scan

-- The planner support function of gpudl_query and gpudl_count: the planner
-- calls it while costing a call, which loads the library, and with it the
-- planner hook of the GpuDatalog custom scan, before the first gpudl call of
-- a session is planned.
CREATE FUNCTION gpudl.planner_support(internal)
    RETURNS internal
    AS 'MODULE_PATHNAME', 'gpudl_planner_support' LANGUAGE C STRICT;
ALTER FUNCTION gpudl_query(text, text) SUPPORT gpudl.planner_support;
ALTER FUNCTION gpudl_count(text, text) SUPPORT gpudl.planner_support;

------------------------------------------------------ pinned tables

-- Change counts of tables loaded with gpudl_load (a cached copy made at an
-- older count is made again); written only by the trigger below.
CREATE TABLE gpudl.table_changes (
    relid   oid PRIMARY KEY,
    changes bigint NOT NULL DEFAULT 0
);
REVOKE ALL ON gpudl.table_changes FROM PUBLIC;
GRANT SELECT ON gpudl.table_changes TO PUBLIC;

-- gpudl_load registers a table here (its owner may not write the table above).
CREATE FUNCTION gpudl._cache_register(rel oid) RETURNS void
    LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog
    AS $$ INSERT INTO gpudl.table_changes(relid) VALUES (rel) ON CONFLICT DO NOTHING $$;

-- On a table loaded with gpudl_load: counts every change statement.
CREATE FUNCTION gpudl._cache_invalidate() RETURNS trigger
    AS 'MODULE_PATHNAME', 'gpudl_cache_invalidate' LANGUAGE C SECURITY DEFINER
    SET search_path = pg_catalog;

CREATE FUNCTION gpudl_load(relation regclass)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'gpudl_load' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_load(regclass) IS
    'pin a table''s columns in this session''s columnar buffers; returns rows loaded';

CREATE FUNCTION gpudl_unload(relation regclass)
    RETURNS void
    AS 'MODULE_PATHNAME', 'gpudl_unload' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION gpudl_unload(regclass) IS 'forget a loaded table''s buffers';

CREATE FUNCTION gpudl_cache_status()
    RETURNS TABLE(relation regclass, rows bigint, bytes bigint, device text, loaded_at timestamptz)
    AS 'MODULE_PATHNAME', 'gpudl_cache_status' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_cache_status() IS 'the tables loaded in this session';
