-- 80_learn_nary: rule learning over relational data (issue 15) — targets
-- and background of any arity, long bodies, types from the schema and the
-- types argument, the time budget, the noise setting, predicates the
-- learner leaves out, and bad arguments.
CREATE SCHEMA t80;
SET search_path = t80, public;

-- ---------------------------------------------------------------- n-ary
-- deal(shop, item, price): a sale at a cheap price (a ternary target over a
-- ternary and a unary table)
CREATE TABLE sale(shop int, item int, price int);
INSERT INTO sale SELECT s, i, (s * 7 + i * 3) % 10 FROM generate_series(1, 6) s, generate_series(1, 8) i;
CREATE TABLE cheap(price int);
INSERT INTO cheap VALUES (0), (1), (2);
CREATE TABLE deal_pos AS SELECT * FROM sale WHERE price IN (0, 1, 2);
-- negatives: dear sales, and cheap prices a shop does not ask for that item
CREATE TABLE deal_neg AS
  SELECT * FROM sale WHERE price NOT IN (0, 1, 2)
  UNION SELECT shop, item, (price + 1) % 3 FROM sale WHERE price IN (0, 1, 2);
SELECT gpudl_create_program('nary80');
SELECT gpudl_bind('nary80', 'sale', 'sale');
SELECT gpudl_bind('nary80', 'cheap', 'cheap');
SELECT rank, rule, precision, recall, support
FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg') ORDER BY rank;
-- the run went to the refinement search and says so
SELECT message LIKE 'refinement search%' AS refine, timed_out FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
-- committed, the engine derives exactly the positives
SELECT count(*) FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', commit => true);
SELECT (SELECT count(*) FROM gpudl_query('nary80', 'deal(S, I, P)') AS t(s int, i int, p int)) AS derived,
       (SELECT count(*) FROM (SELECT * FROM gpudl_query('nary80', 'deal(S, I, P)') AS t(s int, i int, p int)
                              EXCEPT SELECT * FROM deal_pos) d) AS wrong;
-- a binary target whose rule needs the ternary table (no longer left out);
-- types keep shops, items and prices apart (the committed deal is background
-- now, typed too)
CREATE TABLE free(price int);
INSERT INTO free VALUES (0);
SELECT gpudl_bind('nary80', 'free', 'free');
CREATE TABLE sells_pos AS SELECT DISTINCT shop, item FROM sale WHERE price = 0;
CREATE TABLE sells_neg AS SELECT DISTINCT shop, item FROM sale WHERE price <> 0;
SELECT rank, rule FROM gpudl_learn('nary80', 'sells_free', 'sells_pos', 'sells_neg', max_body => 2,
  types => 'sells_free(shop, item); sale(shop, item, price); deal(shop, item, price); cheap(price); free(price)')
ORDER BY rank;

-- ---------------------------------------------------------- a 5-atom rule
-- Zendo-like scenes: a scene is positive when one of its pieces is small and
-- touches a red piece:  pos(S) :- piece(S, P), size(P, Z), small(Z),
-- contact(P, Q), red(Q).  Sizes, colours and contacts are planted by a
-- fixed hash so that no shorter rule fits.
CREATE TABLE piece(scene int, p int);
INSERT INTO piece SELECT s, s * 10 + k FROM generate_series(1, 60) s, generate_series(1, 4) k;
CREATE TABLE size(p int, z int);
INSERT INTO size SELECT p, 1 + (p * 2654435761 % 7919) % 3 FROM piece;
CREATE TABLE small(z int);
INSERT INTO small VALUES (1);
CREATE TABLE red(p int);
INSERT INTO red SELECT p FROM piece WHERE (p * 40503 % 7) < 3;
CREATE TABLE contact(p int, q int);
INSERT INTO contact SELECT a.p, b.p FROM piece a JOIN piece b ON a.scene = b.scene AND a.p <> b.p
  WHERE ((a.p * 31 + b.p * 17) % 5) = 0;
CREATE TABLE zen_pos AS SELECT DISTINCT pc.scene FROM piece pc
  JOIN size sz ON sz.p = pc.p JOIN small sm ON sm.z = sz.z
  JOIN contact c ON c.p = pc.p JOIN red r ON r.p = c.q;
CREATE TABLE zen_neg AS SELECT DISTINCT scene FROM piece EXCEPT SELECT scene FROM zen_pos;
SELECT (SELECT count(*) FROM zen_pos) AS positives, (SELECT count(*) FROM zen_neg) AS negatives;
SELECT gpudl_create_program('zen80');
SELECT gpudl_bind('zen80', t, t) FROM unnest(ARRAY['piece', 'size', 'small', 'red', 'contact']) t;
SELECT rank, rule, precision, recall
FROM gpudl_learn('zen80', 'zen', 'zen_pos', 'zen_neg', max_body => 5) ORDER BY rank;
-- with at most 3 atoms there is no exact rule: the best short program is worse
SELECT bool_and(precision = 1) AS consistent, sum(support) < (SELECT count(*) FROM zen_pos) AS incomplete
FROM gpudl_learn('zen80', 'zen', 'zen_pos', 'zen_neg', max_body => 3, method => 'refine');

-- ---------------------------------------------------------------- types
-- People 1..12 live in cities 1..4; cities 1 and 2 are big.  "Lives in a
-- big city" holds for persons 1 and 2 only, so without types
-- t(X) :- big(X) fits by coincidence (person ids equal to city ids).
CREATE TABLE lives(p int, c int);
INSERT INTO lives SELECT p, CASE WHEN p <= 2 THEN p ELSE 3 + p % 2 END FROM generate_series(1, 12) p;
CREATE TABLE big(c int);
INSERT INTO big VALUES (1), (2);
CREATE TABLE town_pos AS SELECT p FROM generate_series(1, 2) p;
CREATE TABLE town_neg AS SELECT p FROM generate_series(3, 12) p;
SELECT gpudl_create_program('ty80');
SELECT gpudl_bind('ty80', 'lives', 'lives');
SELECT gpudl_bind('ty80', 'big', 'big');
SELECT rank, rule FROM gpudl_learn('ty80', 'town', 'town_pos', 'town_neg') ORDER BY rank;
-- an explicit types argument: persons and cities never share a variable
SELECT rank, rule FROM gpudl_learn('ty80', 'town', 'town_pos', 'town_neg',
                                   types => 'town(person); lives(person, city); big(city)') ORDER BY rank;
-- the same from the schema: domains
CREATE DOMAIN person AS int;
CREATE DOMAIN city AS int;
CREATE TABLE dlives(p person, c city);
INSERT INTO dlives SELECT * FROM lives;
CREATE TABLE dbig(c city);
INSERT INTO dbig SELECT * FROM big;
CREATE TABLE dtown_pos(p person);
INSERT INTO dtown_pos SELECT * FROM town_pos;
SELECT gpudl_create_program('dom80');
SELECT gpudl_bind('dom80', 'lives', 'dlives');
SELECT gpudl_bind('dom80', 'big', 'dbig');
SELECT rank, rule FROM gpudl_learn('dom80', 'town', 'dtown_pos', 'town_neg') ORDER BY rank;
-- and from foreign keys: a column references the city table's key
CREATE TABLE cities(id int PRIMARY KEY);
INSERT INTO cities SELECT generate_series(1, 4);
CREATE TABLE flives(p int, c int REFERENCES cities(id));
INSERT INTO flives SELECT * FROM lives;
CREATE TABLE fbig(c int REFERENCES cities(id));
INSERT INTO fbig SELECT * FROM big;
SELECT gpudl_create_program('fk80');
SELECT gpudl_bind('fk80', 'lives', 'flives');
SELECT gpudl_bind('fk80', 'big', 'fbig');
SELECT rank, rule FROM gpudl_learn('fk80', 'town', 'dtown_pos', 'town_neg', types => 'town(person)') ORDER BY rank;
-- columns of different SQL types never join
CREATE TABLE tlives(p int, c text);
INSERT INTO tlives SELECT p, 'c' || c FROM lives;
CREATE TABLE tbig(c text);
INSERT INTO tbig SELECT 'c' || c FROM big;
SELECT gpudl_create_program('tt80');
SELECT gpudl_bind('tt80', 'lives', 'tlives');
SELECT gpudl_bind('tt80', 'big', 'tbig');
SELECT rank, rule FROM gpudl_learn('tt80', 'town', 'town_pos', 'town_neg') ORDER BY rank;

-- ---------------------------------------------------------- time budget
-- a budget far too small for the search: it returns within it, with the
-- best program found so far (here none), says so, and records it
SELECT clock_timestamp() AS t0 \gset
SELECT coalesce(bool_and(precision = 1), true) AS best_so_far_consistent
FROM gpudl_learn('zen80', 'zen', 'zen_pos', 'zen_neg', max_body => 6, max_seconds => 0.001);
SELECT clock_timestamp() - :'t0'::timestamptz < interval '5 seconds' AS returned_in_time;
SELECT timed_out, message LIKE '%max_seconds ran out%' AS says_so, (params->>'max_seconds')::float8 AS max_seconds
FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
-- a budget that suffices is not marked
SELECT count(*) AS rules FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', max_seconds => 60);
SELECT timed_out FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;

-- ---------------------------------------------------------------- noise
-- deal with 4 labels flipped: exact learning needs extra rules for the
-- outliers (or cannot cover them); noise => 0.2 returns the one rule
CREATE TABLE ndeal_pos AS
  (SELECT * FROM deal_pos ORDER BY shop, item LIMIT 1000 OFFSET 2)
  UNION ALL (SELECT * FROM sale WHERE price NOT IN (0, 1, 2) ORDER BY shop, item LIMIT 2);
CREATE TABLE ndeal_neg AS
  (SELECT * FROM deal_neg EXCEPT SELECT * FROM ndeal_pos)
  UNION ALL (SELECT * FROM deal_pos ORDER BY shop, item LIMIT 2);
SELECT count(*) AS rules, bool_and(precision = 1) AS consistent
FROM gpudl_learn('nary80', 'deal', 'ndeal_pos', 'ndeal_neg', max_body => 3);
SELECT rank, rule, round(precision::numeric, 3) AS prec, round(recall::numeric, 3) AS rec
FROM gpudl_learn('nary80', 'deal', 'ndeal_pos', 'ndeal_neg', max_body => 3, noise => 0.2) ORDER BY rank;
SELECT params->>'noise' AS noise FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;

-- ----------------------------------------- what the learner leaves out
CREATE TABLE wide(a int, b int, c int, d int, e int, f int, g int, h int, i int);
INSERT INTO wide VALUES (1, 2, 3, 4, 5, 6, 7, 8, 9);
SELECT gpudl_bind('nary80', 'wide', 'wide');
SELECT count(*) AS rules FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg');
CREATE TABLE nothing(a int, b int, c int);
SELECT gpudl_bind('zen80', 'nothing', 'nothing');
SELECT count(*) AS rules FROM gpudl_learn('zen80', 'zen', 'zen_pos', 'zen_neg', max_body => 5);

-- ----------------------------------------------------------------- errors
SELECT * FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', max_body => 9);
SELECT * FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', noise => 1);
SELECT * FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', max_seconds => -1);
SELECT * FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', max_vars => 13);
SELECT * FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', method => 'magic');
SELECT * FROM gpudl_learn('nary80', 'deal', 'deal_pos', 'deal_neg', method => 'bulk');
SELECT * FROM gpudl_learn('ty80', 'town', 'town_pos', 'town_neg', types => 'lives(person)');
SELECT * FROM gpudl_learn('ty80', 'town', 'town_pos', 'town_neg', types => 'nosuch(a)');
SELECT * FROM gpudl_learn('ty80', 'town', 'town_pos', 'town_neg', types => 'lives(person city)');
SELECT * FROM gpudl_learn('ty80', 'town', 'SELECT 1, 2, 3, 4, 5, 6, 7, 8, 9');

SELECT gpudl_drop_program(p) FROM unnest(ARRAY['nary80', 'zen80', 'ty80', 'dom80', 'fk80', 'tt80']) p;
DROP SCHEMA t80 CASCADE;
