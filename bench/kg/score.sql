-- bench/kg/score.sql — filtered link-prediction scores of the answers in
-- table preds(query, answer, score, rank) for the triples of split :split.
-- Each triple (h, r, t) is asked both ways: r(h, ?) with answer t and
-- r(?, t) with answer h.  Filtered: other true answers (any split) are
-- removed.  Ties at their expected rank: rank = 1 + #better + #tied / 2; an
-- entity no rule derives ties with every other entity no rule derives.
--
-- Set-based, so it takes seconds on FB15k-237 (40,932 queries, 9.5 M
-- answers): gpudl's rank is 1 + the answers strictly better, so the
-- candidates better than the want are rank - 1 of them, less the true
-- answers among them.  preds needs no index and is scanned twice: once
-- hash-joined with the wants and the true answers of the asked queries
-- (found through triples' indexes), once to count the answers of each
-- query and those tied with a want.
\set ON_ERROR_STOP 1
-- exclude_known: the answers come from gpudl_predict(..., exclude_known => true), as eval.sh's do
\if :{?exclude_known}
\else
\set exclude_known true
\endif
SET client_min_messages = warning;
SET work_mem = '256MB';
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
-- every true answer (any split) of each query asked; in_graph: a triple of facts or train
CREATE TEMP TABLE truth AS
  SELECT query, ans, bool_or(in_graph) AS in_graph
    FROM (SELECT q.query, k.t AS ans, k.split IN ('facts', 'train') AS in_graph
            FROM queries q JOIN triples k ON k.r = q.r AND k.h = q.given WHERE q.dir = 'tail'
          UNION ALL
          SELECT q.query, k.h, k.split IN ('facts', 'train')
            FROM queries q JOIN triples k ON k.r = q.r AND k.t = q.given WHERE q.dir = 'head') t
   GROUP BY query, ans;
ANALYZE truth;
-- scan 1 of preds: the ranks of the wants and of the true answers gpudl_predict may have ranked
-- (with exclude_known, as eval.sh's calls, no answer is a triple of the graph)
CREATE TEMP TABLE hits AS
  SELECT p.query, p.answer, p.rank
    FROM preds p
    JOIN (SELECT query, want AS ans FROM asked
          UNION SELECT query, ans FROM truth WHERE NOT (in_graph AND :'exclude_known')) i
      ON i.query = p.query AND i.ans = p.answer;
CREATE UNIQUE INDEX ON hits(query, answer);
ANALYZE hits;
-- the true answers ranked, counted per (query, rank) with a running total over the ranks
CREATE TEMP TABLE true_at AS
  SELECT query, rank, n, sum(n) OVER (PARTITION BY query ORDER BY rank) AS upto
    FROM (SELECT h.query, h.rank, count(*) AS n
            FROM truth k JOIN hits h ON h.query = k.query AND h.answer = k.ans
           GROUP BY h.query, h.rank) c;
CREATE UNIQUE INDEX ON true_at(query, rank);
CREATE TEMP TABLE n_truth AS SELECT query, count(*) AS n FROM truth GROUP BY query;
CREATE UNIQUE INDEX ON n_truth(query);
-- each asked triple with the rank of its want (NULL: not derived)
CREATE TEMP TABLE asked_w AS
  SELECT a.*, w.rank AS want_rank FROM asked a LEFT JOIN hits w ON w.query = a.query AND w.answer = a.want;
ANALYZE true_at, n_truth, asked_w;
-- scan 2 of preds: the answers of each query, grouped apart where they tie with a derived want
CREATE TEMP TABLE counts AS
  SELECT p.query, w.want_rank AS rank, count(*) AS n
    FROM preds p LEFT JOIN (SELECT DISTINCT query, want_rank FROM asked_w WHERE want_rank IS NOT NULL) w
      ON w.query = p.query AND w.want_rank = p.rank
   GROUP BY p.query, w.want_rank;
\echo queries gpudl_predict answered that score.sql does not ask (should be 0):
SELECT count(DISTINCT c.query) AS unmatched FROM counts c LEFT JOIN queries q USING (query) WHERE q.query IS NULL;
CREATE TEMP TABLE per_query AS SELECT query, sum(n) AS answers FROM counts GROUP BY query;
CREATE UNIQUE INDEX ON per_query(query);
CREATE TEMP TABLE tied AS SELECT query, rank, n FROM counts WHERE rank IS NOT NULL;
CREATE UNIQUE INDEX ON tied(query, rank);
ANALYZE per_query, tied;
CREATE TEMP TABLE final AS
  SELECT a.r, a.want_rank IS NOT NULL AS derived,
         CASE WHEN a.want_rank IS NOT NULL
              -- better: rank - 1 answers, less the true ones; tied: less the true ones (the want)
              THEN 1 + (a.want_rank - 1 - coalesce(tb.upto, 0))
                     + (tie.n - coalesce(tt.n, 0)) / 2.0
              -- not derived: behind every wrong candidate, tied with the other underived entities
              ELSE 1 + (coalesce(pq.answers, 0) - coalesce(ta.upto, 0))
                     + ((SELECT count(*) FROM entities) - nt.n
                        - (coalesce(pq.answers, 0) - coalesce(ta.upto, 0))) / 2.0
         END AS frank
    FROM asked_w a
    JOIN n_truth nt ON nt.query = a.query
    LEFT JOIN per_query pq ON pq.query = a.query
    LEFT JOIN tied tie ON tie.query = a.query AND tie.rank = a.want_rank
    LEFT JOIN true_at tt ON tt.query = a.query AND tt.rank = a.want_rank
    -- true answers ranked better than the want, or all of them
    LEFT JOIN LATERAL (SELECT upto FROM true_at x WHERE x.query = a.query AND x.rank < a.want_rank
                        ORDER BY x.rank DESC LIMIT 1) tb ON true
    LEFT JOIN LATERAL (SELECT upto FROM true_at x WHERE x.query = a.query
                        ORDER BY x.rank DESC LIMIT 1) ta ON true;
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
