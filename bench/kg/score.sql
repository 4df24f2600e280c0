-- bench/kg/score.sql — filtered link-prediction scores of the answers in
-- table preds(query, answer, score, rank) for the triples of split :split.
-- Each triple (h, r, t) is asked both ways: r(h, ?) with answer t and
-- r(?, t) with answer h.  Filtered: other true answers (any split) are
-- removed.  Ties at their expected rank: rank = 1 + #better + #tied / 2; an
-- entity no rule derives ties with every other entity no rule derives.
--
-- Set-based, so it takes seconds on FB15k-237 (40,932 queries): the
-- candidates that are not true answers are counted once per (query, rank),
-- with a running total over the ranks, and each asked triple looks its
-- want's rank up there (two index probes) instead of scanning the answers.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET work_mem = '256MB';
-- every true answer of a query, in both directions
CREATE TEMP TABLE truth AS
  SELECT DISTINCT r, 'tail'::text AS dir, h AS given, t AS ans FROM triples
  UNION SELECT DISTINCT r, 'head', t, h FROM triples;
CREATE INDEX ON truth(r, dir, given, ans);
ANALYZE truth;
CREATE TEMP TABLE asked AS
  SELECT x.r, d.dir,
         CASE d.dir WHEN 'tail' THEN kg_pred_text(x.r) || '(' || kg_lit(x.h) || ', Y)'
                    ELSE kg_pred_text(x.r) || '(X, ' || kg_lit(x.t) || ')' END AS query,
         CASE d.dir WHEN 'tail' THEN x.t ELSE x.h END AS want,
         CASE d.dir WHEN 'tail' THEN x.h ELSE x.t END AS given
    FROM triples x, (VALUES ('tail'), ('head')) d(dir)
   WHERE x.split = :'split';
-- the queries asked, with what they ask
CREATE TEMP TABLE queries AS SELECT DISTINCT query, r, dir, given FROM asked;
CREATE UNIQUE INDEX ON queries(query);
ANALYZE asked, queries;
\echo queries gpudl_predict answered that score.sql does not ask (should be 0):
SELECT count(DISTINCT p.query) AS unmatched FROM preds p LEFT JOIN queries q USING (query) WHERE q.query IS NULL;
-- candidates that are not true answers, counted per (query, rank), with the
-- running total of the candidates at that rank or better
CREATE TEMP TABLE wrong_at AS
  SELECT query, rank, n, sum(n) OVER (PARTITION BY query ORDER BY rank) AS upto
    FROM (SELECT p.query, p.rank, count(*) AS n
            FROM preds p JOIN queries q USING (query)
           WHERE NOT EXISTS (SELECT FROM truth k
                              WHERE k.r = q.r AND k.dir = q.dir AND k.given = q.given AND k.ans = p.answer)
           GROUP BY p.query, p.rank) c;
CREATE UNIQUE INDEX ON wrong_at(query, rank);
-- true answers per query (the want among them)
CREATE TEMP TABLE n_truth AS SELECT r, dir, given, count(*) AS n FROM truth GROUP BY r, dir, given;
CREATE UNIQUE INDEX ON n_truth(r, dir, given);
ANALYZE wrong_at, n_truth;
CREATE TEMP TABLE final AS
  SELECT a.r, w.rank IS NOT NULL AS derived,
         CASE WHEN w.rank IS NOT NULL
              THEN 1 + coalesce(b.upto, 0) + coalesce(tie.n, 0) / 2.0
              -- not derived: behind every derived candidate, tied with the other underived ones
              ELSE 1 + coalesce(b.upto, 0) + ((SELECT count(*) FROM entities) - nt.n - coalesce(b.upto, 0)) / 2.0
         END AS frank
    FROM asked a
    LEFT JOIN preds w ON w.query = a.query AND w.answer = a.want
    JOIN n_truth nt ON nt.r = a.r AND nt.dir = a.dir AND nt.given = a.given
    LEFT JOIN LATERAL (SELECT upto FROM wrong_at x
                        WHERE x.query = a.query AND (w.rank IS NULL OR x.rank < w.rank)
                        ORDER BY x.rank DESC LIMIT 1) b ON true
    LEFT JOIN wrong_at tie ON tie.query = a.query AND tie.rank = w.rank;
\echo per relation (filtered):
SELECT r, count(*) AS queries, round(avg(1 / frank)::numeric, 3) AS mrr,
       round(avg((frank <= 1)::int)::numeric, 3) AS hits1,
       round(avg((frank <= 10)::int)::numeric, 3) AS hits10,
       round(avg(derived::int)::numeric, 3) AS derived
  FROM final GROUP BY r ORDER BY r;
\echo overall:
SELECT count(*) AS queries, round(avg(1 / frank)::numeric, 4) AS mrr,
       round(avg((frank <= 1)::int)::numeric, 4) AS hits1,
       round(avg((frank <= 10)::int)::numeric, 4) AS hits10,
       round(avg(derived::int)::numeric, 4) AS derived
  FROM final;
