-- 74_predict_weighted: gpudl_fit_weights learns the weights of
-- gpudl_predict's 'weighted' aggregation from held-out triples; with
-- kind_noisy_or's weights 'weighted' ranks as kind_noisy_or does; the
-- fitted weights rank the held-out answers no worse; errors change nothing;
-- the caller's rights on the held-out triples.
\set VERBOSITY default
SET client_min_messages = warning;
DROP ROLE IF EXISTS fit_user;
CREATE ROLE fit_user;
RESET client_min_messages;
-- a graph whose relations say something about each other (and some noise), some triples held out
CREATE TABLE fw_next(s text, o text);
INSERT INTO fw_next SELECT 'e' || x, 'e' || ((x + 1) % 40) FROM generate_series(0, 39) x WHERE x % 5 <> 0;
CREATE TABLE fw_skip(s text, o text);
INSERT INTO fw_skip SELECT 'e' || x, 'e' || ((x + 2) % 40) FROM generate_series(0, 39) x WHERE x % 4 <> 0;
CREATE TABLE "fw Near"(s text, o text);
INSERT INTO "fw Near" SELECT 'e' || x, 'e' || ((x * 7 + 3) % 40) FROM generate_series(0, 39) x
  UNION SELECT 'e' || x, 'e' || ((x + 1) % 40) FROM generate_series(0, 39) x WHERE x % 3 = 0
  UNION SELECT 'e' || x, 'e' || ((x + 2) % 40) FROM generate_series(0, 39) x WHERE x % 7 = 0;
CREATE TABLE fw_like(s text, o text);
INSERT INTO fw_like SELECT 'e' || x, 'e' || (x % 3) FROM generate_series(0, 39) x WHERE x % 2 = 0;
CREATE TABLE fw_held(rel text, s text, o text);
INSERT INTO fw_held
  SELECT 'next', 'e' || x, 'e' || ((x + 1) % 40) FROM generate_series(0, 39) x WHERE x % 5 = 0
  UNION ALL SELECT '/fw/skip', 'e' || x, 'e' || ((x + 2) % 40) FROM generate_series(0, 39) x WHERE x % 4 = 0;
SELECT gpudl_create_program('fw');
SELECT gpudl_bind('fw', 'next', 'fw_next'), gpudl_bind('fw', '/fw/skip', 'fw_skip'),
       gpudl_bind('fw', 'near', '"fw Near"'), gpudl_bind('fw', 'like', 'fw_like');
SELECT count(*) > 0 AS stored FROM gpudl_mine('fw', max_body => 2, min_head_coverage => 0, min_confidence => 0,
                                              constants => true, commit => true);

-- the weights: 24 non-negative numbers, the same for the same data
SELECT gpudl_fit_weights('fw', 'fw_held', smoothing => 1) AS w \gset
SELECT array_length(:'w'::float8[], 1) AS weights,
       bool_and(x >= 0 AND x < 'Infinity') AS non_negative
  FROM unnest(:'w'::float8[]) x;
SELECT gpudl_fit_weights('fw', 'SELECT * FROM fw_held', smoothing => 1) = :'w'::float8[] AS same_again;

-- kind_noisy_or's weights (1 per kind, 0 for the rest): the same ranks as kind_noisy_or
CREATE TEMP TABLE fw_queries AS
  SELECT rel, s, NULL::text AS o FROM fw_held UNION ALL SELECT rel, NULL, o FROM fw_held;
CREATE TEMP TABLE fw_kind AS
  SELECT query, answer, rank FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'kind_noisy_or',
                                                "limit" => 0, smoothing => 1);
CREATE TEMP TABLE fw_unit AS
  SELECT query, answer, rank FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted',
      "limit" => 0, smoothing => 1, weights => '{1,1,1,1,1,1,0,0,0,0,0,0,1,1,1,1,1,1,0,0,0,0,0,0}');
SELECT count(*) > 0 AS answers,
       NOT EXISTS (SELECT * FROM fw_kind EXCEPT SELECT * FROM fw_unit) AND
       NOT EXISTS (SELECT * FROM fw_unit EXCEPT SELECT * FROM fw_kind) AS ranks_as_kinds
  FROM fw_kind;

-- the fitted weights: the same answers, the held-out ones ranked better (kind_noisy_or
-- trusts the noisy near links as much as the paths through next and skip)
CREATE TEMP TABLE fw_fit AS
  SELECT query, answer, rank FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted',
      "limit" => 0, smoothing => 1, weights => :'w'::float8[]);
SELECT NOT EXISTS (SELECT query, answer FROM fw_kind EXCEPT SELECT query, answer FROM fw_fit) AND
       NOT EXISTS (SELECT query, answer FROM fw_fit EXCEPT SELECT query, answer FROM fw_kind) AS same_answers;
CREATE TEMP TABLE fw_want AS
  SELECT format('%s(%s, Y)', CASE WHEN rel = 'next' THEN 'next' ELSE '"/fw/skip"' END, format('"%s"', s)) AS query, o AS answer
    FROM fw_held
  UNION ALL
  SELECT format('%s(X, %s)', CASE WHEN rel = 'next' THEN 'next' ELSE '"/fw/skip"' END, format('"%s"', o)), s
    FROM fw_held;
-- mean reciprocal rank of the held-out answers (an underived one counts 0)
SELECT (SELECT sum(1.0 / f.rank) FROM fw_want w JOIN fw_fit f USING (query, answer))
       >= (SELECT sum(1.0 / k.rank) FROM fw_want w JOIN fw_kind k USING (query, answer)) - 1e-9 AS fit_no_worse,
       (SELECT count(*) FROM fw_want w JOIN fw_kind k USING (query, answer)) > 0 AS some_derived;
SELECT round((SELECT sum(1.0 / k.rank) FROM fw_want w JOIN fw_kind k USING (query, answer)) / (SELECT count(*) FROM fw_want), 3) AS mrr_kinds,
       round((SELECT sum(1.0 / f.rank) FROM fw_want w JOIN fw_fit f USING (query, answer)) / (SELECT count(*) FROM fw_want), 3) AS mrr_fitted;

-- errors: a clear message, nothing changed
SELECT count(*) AS mined_before FROM gpudl.mined_rules \gset
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted');
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', weights => :'w'::float8[]);
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted', weights => '{1,2,3}');
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted',
                                   weights => '{1,1,1,1,1,1,0,0,0,0,0,0,1,1,1,1,1,1,0,0,0,0,0,-1}');
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted',
                                   weights => '{1,1,1,1,1,1,0,0,0,0,0,0,1,1,1,1,1,1,0,0,0,0,0,NULL}');
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'weighted',
                                   weights => '{1,1,1,1,1,1,0,0,0,0,0,0,1,1,1,1,1,1,0,0,0,0,0,NaN}');
SELECT count(*) FROM gpudl_predict('fw', NULL, 'fw_queries', aggregation => 'heavy');
SELECT gpudl_fit_weights('fw', 'SELECT rel, s, NULL::text FROM fw_held');
SELECT gpudl_fit_weights('fw', 'SELECT ''nope'', ''e1'', ''e2''');
SELECT gpudl_fit_weights('fw', 'SELECT rel, s, o FROM fw_held WHERE false');
SELECT gpudl_fit_weights('fw', 'SELECT s, o FROM fw_held');
SELECT gpudl_fit_weights('fw', 'fw_held', confidence => 'best');
SELECT gpudl_fit_weights('fw', 'fw_held', smoothing => -1);
SELECT gpudl_fit_weights('nope', 'fw_held');
SELECT count(*) = :mined_before AS catalog_unchanged FROM gpudl.mined_rules;

-- rights: the program's use, then the caller's on the held-out triples
SET ROLE fit_user;
SELECT gpudl_fit_weights('fw', 'fw_held');
RESET ROLE;
SELECT gpudl_grant('fw', 'fit_user', 'use');
GRANT SELECT ON fw_next, fw_skip, "fw Near", fw_like TO fit_user;
SET ROLE fit_user;
SELECT gpudl_fit_weights('fw', 'fw_held');
RESET ROLE;
GRANT SELECT ON fw_held TO fit_user;
SET ROLE fit_user;
SELECT gpudl_fit_weights('fw', 'fw_held', smoothing => 1) = :'w'::float8[] AS same_for_grantee;
RESET ROLE;

SELECT gpudl_drop_program('fw');
DROP TABLE fw_held, fw_next, fw_skip, "fw Near", fw_like;
DROP ROLE fit_user;
