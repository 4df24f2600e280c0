-- gpudl 0.2 -> 0.3: knowledge-graph mining and prediction, rule learning
-- over relational data (any arity, types, time budget, noise).
-- Every section keeps what a 0.2 user has: programs, rules, bindings, grants,
-- learn runs.  CREATE EXTENSION runs gpudl--0.1.sql and every update script
-- in turn, so a new install and an updated one end the same.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.3'" to load this file. \quit

-- ------------------------------------------------------------ mining (KG)
--
-- gpudl_mine: every closed, connected rule (AMIE's language, up to three
-- body atoms) over a program's knowledge graph: its binary predicates over
-- one type of entity.  commit => true stores the rules in gpudl.mined_rules
-- (replacing the program and target's earlier ones) for gpudl_predict.
-- Mined rules follow their program's privileges, like gpudl.rules: seen by
-- those who may use the program, written by those who may modify it.

CREATE TABLE gpudl.mined_rules (
    id              bigserial PRIMARY KEY,
    program         text NOT NULL REFERENCES gpudl.programs(name) ON DELETE CASCADE,
    target          text NOT NULL,
    rule            text NOT NULL,
    support         bigint NOT NULL,
    head_coverage   float8 NOT NULL,
    std_confidence  float8 NOT NULL,
    pca_confidence  float8 NOT NULL,
    body_size       bigint NOT NULL,
    pca_body_size   bigint NOT NULL,
    nbody           int NOT NULL,
    params          jsonb,
    mined_by        regrole NOT NULL DEFAULT pg_catalog.to_regrole(pg_catalog.quote_ident(current_user)),
    mined_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mined_rules_program_idx ON gpudl.mined_rules(program, target, id);
COMMENT ON TABLE gpudl.mined_rules IS
    'rules stored by gpudl_mine(commit => true), with their measures; gpudl_predict scores with them';
COMMENT ON COLUMN gpudl.mined_rules.params IS 'the thresholds and device of the mining run';
SELECT pg_catalog.pg_extension_config_dump('gpudl.mined_rules', '');
SELECT pg_catalog.pg_extension_config_dump('gpudl.mined_rules_id_seq', '');
GRANT SELECT, INSERT, UPDATE, DELETE ON gpudl.mined_rules TO PUBLIC;
GRANT USAGE, SELECT ON SEQUENCE gpudl.mined_rules_id_seq TO PUBLIC;

-- 'modify' on the program for any direct change (42501 naming the owner)
CREATE TRIGGER mined_rules_check_privilege BEFORE INSERT OR UPDATE OR DELETE ON gpudl.mined_rules
    FOR EACH ROW EXECUTE FUNCTION gpudl._program_row_check();
ALTER TABLE gpudl.mined_rules ENABLE ROW LEVEL SECURITY;
CREATE POLICY mined_rules_select ON gpudl.mined_rules FOR SELECT
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = mined_rules.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')));
CREATE POLICY mined_rules_insert ON gpudl.mined_rules FOR INSERT
    WITH CHECK (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = mined_rules.program
                        AND gpudl._acl_allows(p.owner, p.acl, 'modify')));
CREATE POLICY mined_rules_update ON gpudl.mined_rules FOR UPDATE
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = mined_rules.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')))
    WITH CHECK (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = mined_rules.program
                        AND gpudl._acl_allows(p.owner, p.acl, 'modify')));
CREATE POLICY mined_rules_delete ON gpudl.mined_rules FOR DELETE
    USING (EXISTS (SELECT FROM gpudl.programs p WHERE p.name = mined_rules.program
                   AND gpudl._acl_allows(p.owner, p.acl, 'use')));

CREATE FUNCTION gpudl_mine(
    program text, target text DEFAULT NULL, max_body int DEFAULT 3,
    min_head_coverage float8 DEFAULT 0.01, min_confidence float8 DEFAULT 0.1,
    min_support bigint DEFAULT 1, commit boolean DEFAULT false)
    RETURNS TABLE(target text, rule text, support bigint, head_coverage float8,
                  std_confidence float8, pca_confidence float8, body_size bigint,
                  pca_body_size bigint)
    AS 'MODULE_PATHNAME', 'gpudl_mine' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_mine(text, text, int, float8, float8, bigint, boolean) IS
    'mine every closed rule (up to max_body atoms) of a program''s knowledge graph, with support, head coverage, std and PCA confidence; commit stores them in gpudl.mined_rules';

-- ------------------------------------------------------------ prediction (KG)
--
-- gpudl_predict: ranked answers of r(h, ?) or r(?, t) (a goal with one
-- constant, or a query / table of rows (subject, object) with one NULL),
-- scored with the program's mined rules for the target (else rules mined
-- for the call with max_body, min_head_coverage, min_confidence).

CREATE FUNCTION gpudl_predict(
    program text, target text, query text, aggregation text DEFAULT 'max',
    exclude_known boolean DEFAULT true, "limit" int DEFAULT 10,
    max_body int DEFAULT 3, min_head_coverage float8 DEFAULT 0.01,
    min_confidence float8 DEFAULT 0.1, confidence text DEFAULT 'std',
    smoothing float8 DEFAULT 20)
    RETURNS TABLE(query text, answer text, score float8, rank bigint, rules text[])
    AS 'MODULE_PATHNAME', 'gpudl_predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8) IS
    'rank the answers of r(h, ?) / r(?, t) queries by mined rules (aggregation max or noisy_or; "limit" 0: all)';

-- ------------------------------------------------------------ rule learning

-- Issue 15: targets and background of any arity (up to 8), bodies of up to 8
-- atoms found by a refinement search, argument types from the schema or the
-- 'types' argument, a time budget and a noise setting.  New parameters are
-- appended with defaults, so every 0.2 call means what it meant, except the
-- default of negative_sampling, now 'closed_world' (on held-out family data
-- it gives precision 0.984 / recall 0.937 against 0.400 / 0.980 for 'pca').
ALTER TABLE gpudl.learn_runs ADD COLUMN timed_out boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN gpudl.learn_runs.timed_out IS
    'max_seconds ran out: the rules are the best program found so far';

DROP FUNCTION gpudl_learn(text, text, text, text, int, int, int, float8, boolean, int, int, boolean, text);
CREATE FUNCTION gpudl_learn(
    program text, target text, positives text, negatives text DEFAULT NULL,
    max_body int DEFAULT 2, max_rules int DEFAULT 32, epochs int DEFAULT 200,
    learning_rate float8 DEFAULT 0.1, allow_recursive boolean DEFAULT false,
    min_support int DEFAULT 1, seed int DEFAULT 0, commit boolean DEFAULT false,
    negative_sampling text DEFAULT 'closed_world',
    max_seconds float8 DEFAULT NULL, noise float8 DEFAULT 0, types text DEFAULT NULL,
    max_vars int DEFAULT NULL, method text DEFAULT 'auto')
    RETURNS TABLE(rank int, rule text, probability float8, loss float8,
                  "precision" float8, recall float8, support bigint,
                  head_coverage float8, std_confidence float8, pca_confidence float8)
    AS 'MODULE_PATHNAME', 'gpudl_learn' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_learn(text, text, text, text, int, int, int, float8, boolean, int, int, boolean, text,
                                float8, float8, text, int, text) IS
    'learn rules for target from example rows; ranked, with losses and confidence measures (negative_sampling: closed_world or pca, when negatives is NULL; max_seconds: time budget, the best program so far when it runs out; noise: share of a rule''s examples that may be negatives; types: argument types, e.g. ''f(train); has_car(train, car)''; max_vars: variables per rule; method: auto, bulk or refine)';
