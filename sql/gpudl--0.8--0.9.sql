-- gpudl 0.8 -> 0.9: link prediction with a learned aggregation.
-- * gpudl_fit_weights(program, query): weights learned from held-out
--   triples (a validation split), how much each kind of evidence is worth
--   on this graph (src/mine/mine_fit.c, docs/DESIGN.md);
-- * gpudl_predict gets `weights` for its new aggregation 'weighted' (the
--   kinds of kind_noisy_or, each weighted, plus the answer's popularity,
--   its best rule, its numbers of rules and clusters, its best rule with a
--   body constant and its best PCA confidence: 24 weights).
-- No table changes; every 0.8 call of gpudl_predict means what it meant.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.9'" to load this file. \quit

DROP FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8, boolean, int);
CREATE FUNCTION gpudl_predict(
    program text, target text, query text, aggregation text DEFAULT 'max',
    exclude_known boolean DEFAULT true, "limit" int DEFAULT 10,
    max_body int DEFAULT 3, min_head_coverage float8 DEFAULT 0.01,
    min_confidence float8 DEFAULT 0.1, confidence text DEFAULT 'std',
    smoothing float8 DEFAULT 20, constants boolean DEFAULT false,
    rules_shown int DEFAULT NULL, weights float8[] DEFAULT NULL)
    RETURNS TABLE(query text, answer text, score float8, rank bigint, rules text[])
    AS 'MODULE_PATHNAME', 'gpudl_predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_predict(text, text, text, text, boolean, int, int, float8, float8, text, float8, boolean, int, float8[]) IS
    'rank the answers of r(h, ?) / r(?, t) queries by mined rules (aggregation max, noisy_or, cluster_noisy_or, kind_noisy_or, or weighted with the weights of gpudl_fit_weights; "limit" 0: all; rules_shown: the best rules of each answer, NULL all)';

CREATE FUNCTION gpudl_fit_weights(
    program text, query text, confidence text DEFAULT 'std', smoothing float8 DEFAULT 20)
    RETURNS float8[]
    AS 'MODULE_PATHNAME', 'gpudl_fit_weights' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION gpudl_fit_weights(text, text, text, float8) IS
    'learn the weights of gpudl_predict''s weighted aggregation from held-out triples: query returns (relation, subject, object) rows, each asked both ways';
