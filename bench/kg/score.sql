-- bench/kg/score.sql — filtered link-prediction scores of the answers in
-- table preds(query, answer, score, rank) for the triples of split :split.
-- Each triple (h, r, t) is asked both ways: r(h, ?) with answer t and
-- r(?, t) with answer h.  Filtered: other true answers (any split) are
-- removed.  Ties at their expected rank: rank = 1 + #better + #tied / 2; an
-- entity no rule derives ties with every other entity no rule derives.
\set ON_ERROR_STOP 1
CREATE TEMP TABLE asked AS
  SELECT x.h, x.r, x.t, d.dir,
         CASE d.dir WHEN 'tail' THEN format('%s(%s, Y)', lower(x.r), to_json(x.h))
                    ELSE format('%s(X, %s)', lower(x.r), to_json(x.t)) END AS query,
         CASE d.dir WHEN 'tail' THEN x.t ELSE x.h END AS want,
         CASE d.dir WHEN 'tail' THEN x.h ELSE x.t END AS given
    FROM triples x, (VALUES ('tail'), ('head')) d(dir)
   WHERE x.split = :'split';
CREATE TEMP TABLE ranks AS
  SELECT a.*, w.rank AS want_rank,
         -- other true answers of the query (filtered away)
         (SELECT count(DISTINCT CASE a.dir WHEN 'tail' THEN k.t ELSE k.h END)
            FROM triples k
           WHERE k.r = a.r AND CASE a.dir WHEN 'tail' THEN k.h ELSE k.t END = a.given
             AND CASE a.dir WHEN 'tail' THEN k.t ELSE k.h END <> a.want) AS n_true,
         -- derived candidates: not true
         (SELECT count(*) FROM preds p
           WHERE p.query = a.query AND p.answer <> a.want
             AND NOT EXISTS (SELECT FROM triples k WHERE k.r = a.r AND
                             CASE a.dir WHEN 'tail' THEN k.h = a.given AND k.t = p.answer
                                        ELSE k.t = a.given AND k.h = p.answer END)
             AND (w.rank IS NULL OR p.rank < w.rank)) AS better,
         (SELECT count(*) FROM preds p
           WHERE w.rank IS NOT NULL AND p.query = a.query AND p.answer <> a.want AND p.rank = w.rank
             AND NOT EXISTS (SELECT FROM triples k WHERE k.r = a.r AND
                             CASE a.dir WHEN 'tail' THEN k.h = a.given AND k.t = p.answer
                                        ELSE k.t = a.given AND k.h = p.answer END)) AS tied_derived
    FROM asked a LEFT JOIN preds w ON w.query = a.query AND w.answer = a.want;
CREATE TEMP TABLE final AS
  SELECT *, CASE WHEN want_rank IS NOT NULL THEN 1 + better + tied_derived / 2.0
                 -- not derived: behind every derived candidate, tied with the other underived ones
                 ELSE 1 + better + ((SELECT count(*) FROM entities) - 1 - n_true - better) / 2.0
            END AS frank
    FROM ranks;
\echo per relation (filtered):
SELECT r, count(*) AS queries, round(avg(1 / frank)::numeric, 3) AS mrr,
       round(avg((frank <= 1)::int)::numeric, 3) AS hits1,
       round(avg((frank <= 10)::int)::numeric, 3) AS hits10,
       round(avg((want_rank IS NOT NULL)::int)::numeric, 3) AS derived
  FROM final GROUP BY r ORDER BY r;
\echo overall:
SELECT count(*) AS queries, round(avg(1 / frank)::numeric, 4) AS mrr,
       round(avg((frank <= 1)::int)::numeric, 4) AS hits1,
       round(avg((frank <= 10)::int)::numeric, 4) AS hits10,
       round(avg((want_rank IS NOT NULL)::int)::numeric, 4) AS derived
  FROM final;
