-- gpudl 0.4 -> 0.5: knowledge graphs at scale (issue 21): mining with a
-- separate bound and head coverage for rules with constants and an anytime
-- budget, prediction with a bound on the rule texts of an answer.  Nothing
-- a 0.4 user has changes: programs, rules, bindings, grants, learn runs and
-- mined rules stay as they are, and every 0.4 call means what it meant (the
-- new parameters come last, with defaults that are 0.4's behaviour).
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.5'" to load this file. \quit

-- ------------------------------------------------------------ mining (KG)
--
-- max_body_constants: body atoms of a rule with constants (1 or 2; NULL:
-- min(max_body, 2)); 1 with max_body 3 is AnyBURL's language (cyclic rules
-- of up to three atoms, acyclic ones of one).
-- constants_min_head_coverage: their head coverage bound (NULL:
-- min_head_coverage; 0: bounded by min_support and the confidences only).
-- max_seconds: anytime mining, level by level (one body atom, then two,
-- then three), each level complete or not kept; a run that ran out says so
-- in a NOTICE and in gpudl.mined_rules.params ("timed_out",
-- "complete_body", "complete_body_constants").

DROP FUNCTION gpudl_mine(text, text, int, float8, float8, bigint, boolean, boolean);
CREATE FUNCTION gpudl_mine(
    program text, target text DEFAULT NULL, max_body int DEFAULT 3,
    min_head_coverage float8 DEFAULT 0.01, min_confidence float8 DEFAULT 0.1,
    min_support bigint DEFAULT 1, commit boolean DEFAULT false,
    constants boolean DEFAULT false, max_body_constants int DEFAULT NULL,
    constants_min_head_coverage float8 DEFAULT NULL, max_seconds float8 DEFAULT NULL)
    RETURNS TABLE(target text, rule text, support bigint, head_coverage float8,
                  std_confidence float8, pca_confidence float8, body_size bigint,
                  pca_body_size bigint)
    AS 'MODULE_PATHNAME', 'gpudl_mine' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_mine(text, text, int, float8, float8, bigint, boolean, boolean, int, float8, float8) IS
    'mine every closed rule (up to max_body atoms; with constants => true also rules with constants, up to max_body_constants atoms, over constants_min_head_coverage) of a program''s knowledge graph, with support, head coverage, std and PCA confidence; max_seconds: anytime, shortest rules first; commit stores them in gpudl.mined_rules';

-- ------------------------------------------------------------ prediction (KG)
--
-- rules_shown: each answer's rules array holds its best rules_shown rules
-- (NULL: all of them, as in 0.4; 0: none).  Scores and ranks do not depend
-- on it; a whole split's answers cost far less to return with a few.

DROP FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8, boolean);
CREATE FUNCTION gpudl_predict(
    program text, target text, query text, aggregation text DEFAULT 'max',
    exclude_known boolean DEFAULT true, "limit" int DEFAULT 10,
    max_body int DEFAULT 3, min_head_coverage float8 DEFAULT 0.01,
    min_confidence float8 DEFAULT 0.1, confidence text DEFAULT 'std',
    smoothing float8 DEFAULT 20, constants boolean DEFAULT false,
    rules_shown int DEFAULT NULL)
    RETURNS TABLE(query text, answer text, score float8, rank bigint, rules text[])
    AS 'MODULE_PATHNAME', 'gpudl_predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8, boolean, int) IS
    'rank the answers of r(h, ?) / r(?, t) queries by mined rules (aggregation max or noisy_or; "limit" 0: all; constants: rules with constants when mining for the call; rules_shown: the best rules of each answer, NULL all)';
