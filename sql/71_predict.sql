-- 71_predict: gpudl_predict on a graph whose ranking is known by hand.
-- likes has three one-atom rules (no reversed atom has support):
--   R1 likes(X, Y) :- friend(X, Y).     support 3, pca body 4: pca .75
--   R2 likes(X, Y) :- colleague(X, Y).  support 2, pca body 3: pca 2/3
--   R3 likes(X, Y) :- neighbor(X, Y).   support 2, pca body 4: pca .5
-- likes("a", ?): b (R1, known), c (R1), d (R2, known), e (R2 and R3), h (R3).
-- max: c .75 > e (2/3, then .5) > h .5; noisy_or: e 1 - (1/3)(1/2) = 5/6 > c > h.
-- Without exclude_known, b ties with c and e beats d on its second rule.
-- smoothing 0 gives these numbers; the default 5 gives support / (pca body + 5).
-- At the end: rules with constants, mined for the call and stored.
\set VERBOSITY default
SET client_min_messages = warning;
DROP ROLE IF EXISTS pred_user;
DROP ROLE IF EXISTS pred_other;
CREATE ROLE pred_user;
CREATE ROLE pred_other;
RESET client_min_messages;
CREATE TABLE friend(x text, y text);
INSERT INTO friend VALUES ('a', 'b'), ('a', 'c'), ('d', 'e'), ('d', 'f'), ('g', 'h');
CREATE TABLE colleague(x text, y text);
INSERT INTO colleague VALUES ('a', 'd'), ('a', 'e'), ('b', 'c'), ('g', 'f'), ('g', 'h');
CREATE TABLE neighbor(x text, y text);
INSERT INTO neighbor VALUES ('a', 'h'), ('a', 'e'), ('d', 'f'), ('b', 'c'), ('g', 'a');
CREATE TABLE likes(x text, y text);
INSERT INTO likes VALUES ('a', 'b'), ('d', 'e'), ('d', 'f'), ('a', 'd'), ('b', 'c');
CREATE TABLE pred_queries(s text, o text);
INSERT INTO pred_queries VALUES ('a', NULL), (NULL, 'e'), ('zed', NULL), ('g', NULL);
GRANT SELECT ON friend, colleague, neighbor, likes, pred_queries TO pred_user;
SELECT gpudl_create_program('soc');
SELECT gpudl_bind('soc', p, p) FROM unnest(ARRAY['friend', 'colleague', 'neighbor', 'likes']) p;

-- the rules (mined for the call when none are stored)
SELECT rule, support, pca_body_size, round(pca_confidence::numeric, 4) AS pca
  FROM gpudl_mine('soc', 'likes', max_body => 1) ORDER BY rule;

-- max with tie-break, noisy_or
SELECT query, answer, round(score::numeric, 4) AS score, rank, rules
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', max_body => 1, smoothing => 0, confidence => 'pca');
SELECT query, answer, round(score::numeric, 4) AS score, rank, rules
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', aggregation => 'noisy_or', max_body => 1, smoothing => 0, confidence => 'pca');
-- known answers too: b ties with c; e beats d on its second-best rule
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', exclude_known => false, max_body => 1, smoothing => 0, confidence => 'pca');
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', aggregation => 'noisy_or', exclude_known => false,
                     max_body => 1, smoothing => 0, confidence => 'pca');
-- cluster_noisy_or (0.5): rules over different body relations add up as in
-- noisy_or; equal scores are then ordered as by max (the best rule first)
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', aggregation => 'cluster_noisy_or', exclude_known => false,
                     max_body => 1, smoothing => 0, confidence => 'pca');
-- kind_noisy_or: kinds of evidence; the one-atom rules over variables are
-- one kind (X and Y linked), so with max_body 1 it ranks as max does
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', aggregation => 'kind_noisy_or', exclude_known => false,
                     max_body => 1, smoothing => 0, confidence => 'pca');
-- the defaults (std confidence, smoothing 20): 3/25, 2/25, 2/25 (e ahead of h by its second rule)
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', max_body => 1);
-- standard confidence: 3/5, 2/5, 2/5 (e and h tie on their best rule; e has a second)
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', max_body => 1, smoothing => 0, confidence => 'std');
-- the other direction, limit
SELECT query, answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('soc', 'likes', 'likes(X, "e")', exclude_known => false, max_body => 1, smoothing => 0, confidence => 'pca');
SELECT answer, rank FROM gpudl_predict('soc', 'likes', 'likes("a", _)', "limit" => 1, max_body => 1);
SELECT count(*) AS all_answers
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', exclude_known => false, "limit" => 0, max_body => 1);

-- a table of queries (a name or a query): one NULL per row marks what to predict;
-- an entity the graph does not know has no answers
SELECT query, answer, rank
  FROM gpudl_predict('soc', 'likes', 'pred_queries', max_body => 1, smoothing => 0, confidence => 'pca');
SELECT query, answer, rank
  FROM gpudl_predict('soc', 'likes', 'SELECT NULL, y FROM likes WHERE x = ''d''', max_body => 1,
                     exclude_known => false);

SELECT query, answer, rank
  FROM gpudl_predict('soc', 'likes', 'VALUES (NULL, ''c''), (''b'', NULL)', max_body => 1, smoothing => 0, confidence => 'pca',
                     exclude_known => false);
-- rules_shown (0.5): the best n rules of each answer, the same scores and ranks
SELECT f.answer, f.rank = s.rank AND f.score = s.score AS same_rank,
       cardinality(s.rules) AS shown, cardinality(f.rules) AS all_rules, s.rules = f.rules[1:1] AS best_first,
       cardinality(z.rules) AS none
  FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', exclude_known => false, "limit" => 0, max_body => 1) f
  JOIN gpudl_predict('soc', 'likes', 'likes("a", Y)', exclude_known => false, "limit" => 0, max_body => 1,
                     rules_shown => 1) s USING (answer)
  JOIN gpudl_predict('soc', 'likes', 'likes("a", Y)', exclude_known => false, "limit" => 0, max_body => 1,
                     rules_shown => 0) z USING (answer)
 ORDER BY f.rank, f.answer;

-- stored rules come first: with only R1 committed, only R1's answers
SELECT count(*) AS mined FROM gpudl_mine('soc', 'likes', max_body => 1, min_confidence => 0.7, commit => true);
SELECT answer, rank, rules FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', max_body => 1);

-- privileges: use the program and read its tables
SET ROLE pred_other;
-- terse: the hint names the owner, the cluster's bootstrap superuser
\set VERBOSITY terse
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)');
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT gpudl_grant('soc', 'pred_other', 'use');
SET ROLE pred_other;
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT gpudl_grant('soc', 'pred_user', 'use');
SET ROLE pred_user;
SELECT answer, rank FROM gpudl_predict('soc', 'likes', 'likes("a", Y)');
-- the queries too are read with the caller's rights
SELECT * FROM gpudl_predict('soc', 'likes', 'SELECT rolname::text, NULL FROM pg_authid');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- errors
SELECT * FROM gpudl_predict('nope', 'likes', 'likes("a", Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'hates', 'hates("a", Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', aggregation => 'sum');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', confidence => 'best');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', "limit" => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', smoothing => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', rules_shown => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", "b")');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes(X, Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'friend("a", Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'enemy("a", Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'likes(1, Y)');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'SELECT ''a'', NULL, NULL');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'SELECT ''a'', ''b''');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'SELECT NULL::text, NULL::text');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', 'SELECT 1, NULL');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM gpudl_predict('soc', 'likes', NULL);
\echo :LAST_ERROR_SQLSTATE

SELECT * FROM gpudl_predict('soc', 'likes', 'likes("a", Y)', constants => NULL);
\echo :LAST_ERROR_SQLSTATE

-- rules with constants (0.4), known by hand.  speaks: ann-fr, bob-fr,
-- cat-it, dan-en; lives: ann, bob, dan, eve in paris, cat in rome.  Mined
-- for the call with constants (one body atom), speaks("eve", ?) gets
--   fr by speaks(X, "fr") :- lives(X, "paris")  PCA 2/3
--   en by speaks(X, "en") :- lives(X, "paris")  PCA 1/3
-- and speaks(?, "fr") gets dan and eve (2/3 each; ann and bob are known).
CREATE TABLE lang_speaks(p text, lang text);
INSERT INTO lang_speaks VALUES ('ann', 'fr'), ('bob', 'fr'), ('cat', 'it'), ('dan', 'en');
CREATE TABLE lang_lives(p text, city text);
INSERT INTO lang_lives VALUES ('ann', 'paris'), ('bob', 'paris'), ('cat', 'rome'), ('dan', 'paris'), ('eve', 'paris');
SELECT gpudl_create_program('lang');
SELECT gpudl_bind('lang', 'speaks', 'lang_speaks');
SELECT gpudl_bind('lang', 'lives', 'lang_lives');
SELECT answer, round(score::numeric, 4) AS score, rank, rules
  FROM gpudl_predict('lang', 'speaks', 'speaks("eve", Y)', max_body => 1, min_head_coverage => 0,
                     min_confidence => 0, smoothing => 0, confidence => 'pca', constants => true);
SELECT count(*) AS without_constants
  FROM gpudl_predict('lang', 'speaks', 'speaks("eve", Y)', max_body => 1, min_head_coverage => 0,
                     min_confidence => 0, smoothing => 0, confidence => 'pca');
SELECT answer, round(score::numeric, 4) AS score, rank
  FROM gpudl_predict('lang', 'speaks', 'speaks(X, "fr")', max_body => 1, min_head_coverage => 0,
                     min_confidence => 0, smoothing => 0, confidence => 'pca', constants => true);

-- stored constant rules, written by hand, one of them filtering: with
--   learns: ann-fr, bob-fr, bob-it, eve-fr, eve-it; spoken_in: fr-paris, it-rome
--   A speaks(X, Y) :- learns(X, Y), spoken_in(Y, "paris").  PCA 2/2
--   B speaks(X, Y) :- learns(X, Y).                          PCA 2/3
--   C speaks(X, "it") :- lives(X, "rome").                   PCA 1/1
--   D speaks(X, "de") :- lives(X, "berlin").  (no berlin in the graph: skipped, NOTICE)
-- speaks("eve", ?) ranks fr (A 1, B 2/3) before it (B 2/3: A filters it out);
-- speaks("cat", ?) gets it by C.
CREATE TABLE lang_learns(p text, lang text);
INSERT INTO lang_learns VALUES ('ann', 'fr'), ('bob', 'fr'), ('bob', 'it'), ('eve', 'fr'), ('eve', 'it');
CREATE TABLE lang_spoken_in(lang text, city text);
INSERT INTO lang_spoken_in VALUES ('fr', 'paris'), ('it', 'rome');
SELECT gpudl_bind('lang', 'learns', 'lang_learns');
SELECT gpudl_bind('lang', 'spoken_in', 'lang_spoken_in');
INSERT INTO gpudl.mined_rules(program, target, rule, support, head_coverage, std_confidence,
                              pca_confidence, body_size, pca_body_size, nbody)
VALUES ('lang', 'speaks', 'speaks(X, Y) :- learns(X, Y), spoken_in(Y, "paris").', 2, 0.5, 2.0 / 3, 1, 3, 2, 2),
       ('lang', 'speaks', 'speaks(X, Y) :- learns(X, Y).', 2, 0.5, 0.4, 2.0 / 3, 5, 3, 1),
       ('lang', 'speaks', 'speaks(X, "it") :- lives(X, "rome").', 1, 0.25, 1, 1, 1, 1, 1),
       ('lang', 'speaks', 'speaks(X, "de") :- lives(X, "berlin").', 1, 0.25, 1, 1, 1, 1, 1);
SELECT answer, round(score::numeric, 4) AS score, rank, rules
  FROM gpudl_predict('lang', 'speaks', 'speaks("eve", Y)', smoothing => 0, confidence => 'pca');
SELECT answer, round(score::numeric, 4) AS score, rank, rules
  FROM gpudl_predict('lang', 'speaks', 'speaks("cat", Y)', exclude_known => false, smoothing => 0,
                     confidence => 'pca');
SELECT gpudl_drop_program('lang');
DROP TABLE lang_speaks, lang_lives, lang_learns, lang_spoken_in;

SELECT gpudl_drop_program('soc');
DROP TABLE friend, colleague, neighbor, likes, pred_queries;
DROP ROLE pred_user;
DROP ROLE pred_other;
