-- gpudl 0.3 -> 0.4: rules with constants in mining and prediction, the
-- memory-lean and partitioned fixpoint's settings, rule learning refinements.
-- Every section keeps what a 0.3 user has: programs, rules, bindings, grants,
-- learn runs, mined rules.  CREATE EXTENSION runs gpudl--0.1.sql and every
-- update script in turn, so a new install and an updated one end the same.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.4'" to load this file. \quit

-- ------------------------------------------------------------ mining (KG)
--
-- Rules with constants (AMIE 3's -const): gpudl_mine(..., constants => true)
-- also mines r(X, c) :- l(X, d), r(X, c) :- l(X, Z), m(Z, d),
-- r(X, c) :- l(X, Z), m(X, Z), r(X, Y) :- l(X, Y), m(X|Y, d) and the heads
-- r(c, X) (docs/DESIGN.md, "Knowledge graphs").  Constants are written as
-- goal literals ("alice", 7), which gpudl_predict reads back.

DROP FUNCTION gpudl_mine(text, text, int, float8, float8, bigint, boolean);
CREATE FUNCTION gpudl_mine(
    program text, target text DEFAULT NULL, max_body int DEFAULT 3,
    min_head_coverage float8 DEFAULT 0.01, min_confidence float8 DEFAULT 0.1,
    min_support bigint DEFAULT 1, commit boolean DEFAULT false,
    constants boolean DEFAULT false)
    RETURNS TABLE(target text, rule text, support bigint, head_coverage float8,
                  std_confidence float8, pca_confidence float8, body_size bigint,
                  pca_body_size bigint)
    AS 'MODULE_PATHNAME', 'gpudl_mine' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_mine(text, text, int, float8, float8, bigint, boolean, boolean) IS
    'mine every closed rule (up to max_body atoms; with constants => true also rules with constants) of a program''s knowledge graph, with support, head coverage, std and PCA confidence; commit stores them in gpudl.mined_rules';

-- ------------------------------------------------------------ prediction (KG)
--
-- Stored rules with constants score answers (r(X, "c") :- s(X, "d") proposes
-- "c"); constants => true mines them for a call without stored rules.

DROP FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8);
CREATE FUNCTION gpudl_predict(
    program text, target text, query text, aggregation text DEFAULT 'max',
    exclude_known boolean DEFAULT true, "limit" int DEFAULT 10,
    max_body int DEFAULT 3, min_head_coverage float8 DEFAULT 0.01,
    min_confidence float8 DEFAULT 0.1, confidence text DEFAULT 'std',
    smoothing float8 DEFAULT 20, constants boolean DEFAULT false)
    RETURNS TABLE(query text, answer text, score float8, rank bigint, rules text[])
    AS 'MODULE_PATHNAME', 'gpudl_predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8, boolean) IS
    'rank the answers of r(h, ?) / r(?, t) queries by mined rules (aggregation max or noisy_or; "limit" 0: all; constants: rules with constants when mining for the call)';

-- ------------------------------------------------------------ rule learning

-- ------------------------------------------------------------ several GPUs
-- Nothing in the catalog: the partitioned fixpoint (issue 14) is set by the
-- GUCs gpudl.partitions (default 1; 0: one per GPU of gpudl.devices; > 1 forces that
-- many partitions, also on one GPU or the CPU) and gpudl.devices ('all' or
-- a list such as '0,1'); EXPLAIN ANALYZE and gpudl_device_info() show the
-- partitions of a run (rows with backend 'partition').
