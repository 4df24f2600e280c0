-- 30_learn: rule induction from SQL — gpudl_learn and its companions,
-- recorded runs, commit, and errors for bad arguments.
CREATE SCHEMA t30;
SET search_path = t30, public;
CREATE TABLE father(a text, b text);
CREATE TABLE mother(a text, b text);
INSERT INTO father VALUES ('abe', 'homer'), ('homer', 'bart'), ('homer', 'lisa'),
  ('clancy', 'marge'), ('clancy', 'selma'), ('bart', 'bo'), ('herb', 'jo');
INSERT INTO mother VALUES ('mona', 'homer'), ('marge', 'bart'), ('marge', 'lisa'),
  ('jackie', 'marge'), ('jackie', 'selma'), ('selma', 'ling'), ('lisa', 'zia');
-- grandparents: positives; some non-grandparent pairs as negatives
CREATE TABLE gp_pos AS
  SELECT DISTINCT x.a, y.b FROM (SELECT * FROM father UNION SELECT * FROM mother) x
  JOIN (SELECT * FROM father UNION SELECT * FROM mother) y ON x.b = y.a;
CREATE TABLE gp_neg(a text, b text);
INSERT INTO gp_neg VALUES ('homer', 'bart'), ('bart', 'homer'), ('marge', 'lisa'),
  ('lisa', 'bart'), ('abe', 'mona'), ('clancy', 'jackie'), ('selma', 'ling'), ('jo', 'herb');

SELECT gpudl_create_program('fam30');
SELECT gpudl_bind('fam30', 'father', 'father');
SELECT gpudl_bind('fam30', 'mother', 'mother');

-- the bias, with deterministic ids
SELECT count(*) FROM gpudl_candidates('fam30', 'grandparent', 2);
SELECT * FROM gpudl_candidates('fam30', 'grandparent', 2) WHERE id < 6 ORDER BY id;
SELECT count(*) FROM gpudl_candidates('fam30', 'grandparent', 2, max_body => 1);

-- learn: rules best first, each with its measures
SELECT rank, rule, round(probability::numeric, 2) AS p, round(precision::numeric, 2) AS prec,
       round(recall::numeric, 2) AS rec, support
FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', 'gp_neg') ORDER BY rank;
-- the run is recorded
SELECT program, target, status, device IN ('cpu', 'gpu') AS device_recorded, epochs, params->>'max_body' AS max_body,
       params->>'positives' AS positives
FROM gpudl.learn_runs ORDER BY id;
SELECT rank, rule, committed FROM gpudl.learned_rules ORDER BY run_id, rank;

-- negatives drawn by the partial completeness assumption, given as a query
SELECT count(*) > 0 AS learned
FROM gpudl_learn('fam30', 'grandparent', 'SELECT a, b FROM gp_pos WHERE a <> ''clancy''');

-- closed-world negatives: pairs the background joins that are not positives
SELECT count(*) > 0 AS learned, bool_and(precision = 1) AS precise
FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', negative_sampling => 'closed_world');
SELECT params->>'negative_sampling' FROM gpudl.learn_runs ORDER BY id DESC LIMIT 1;
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', negative_sampling => 'random');

-- commit => true keeps the rules; then the program derives exactly the positives
SELECT count(*) AS rules FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', 'gp_neg', commit => true);
SELECT rule, learned FROM gpudl.rules WHERE program = 'fam30' ORDER BY id;
SELECT (SELECT count(*) FROM gpudl_query('fam30', 'grandparent(X, Y)') AS t(a text, b text)) AS derived,
       (SELECT count(*) FROM gp_pos) AS positives,
       (SELECT count(*) FROM (SELECT * FROM gpudl_query('fam30', 'grandparent(X, Y)') AS t(a text, b text)
                              EXCEPT SELECT * FROM gp_pos) d) AS wrong;
SELECT committed FROM gpudl.learned_rules WHERE run_id = (SELECT max(id) FROM gpudl.learn_runs) LIMIT 1;

-- which rules derive a fact
SELECT rule FROM gpudl_derivations('fam30', 'grandparent(abe, bart)') ORDER BY rule_id;
SELECT rule FROM gpudl_derivations('fam30', 'grandparent(jackie, ling)') ORDER BY rule_id;
SELECT count(*) FROM gpudl_derivations('fam30', 'grandparent(bart, abe)');

-- false positives against a reference set
SELECT * FROM gpudl_sample_false_positives('fam30', 'grandparent(X, Y)',
  'SELECT * FROM gp_pos WHERE b <> ''bo''', 10) AS t(a text, b text);
SELECT count(*) FROM gpudl_sample_false_positives('fam30', 'grandparent(X, Y)', 'gp_pos', 10) AS t(a text, b text);

-- commit a rule by hand
SELECT gpudl_commit_rule('fam30', 'parent(X, Y) :- father(X, Y).') > 0 AS committed;
SELECT learned FROM gpudl.rules WHERE rule = 'parent(X, Y) :- father(X, Y).';

-- loss and gradient for the candidates at given probabilities, checked
-- against central finite differences of the loss itself
CREATE TABLE cand AS SELECT id FROM gpudl_candidates('fam30', 'sibling_of', 2);
CREATE TABLE sib_pos(a text, b text);
INSERT INTO sib_pos VALUES ('bart', 'lisa'), ('lisa', 'bart'), ('marge', 'selma'), ('selma', 'marge');
CREATE TABLE sib_neg(a text, b text);
INSERT INTO sib_neg VALUES ('homer', 'bart'), ('bart', 'bart'), ('abe', 'lisa');
CREATE TABLE probs AS SELECT array_agg(0.2 + 0.6 * ((id * 37) % 11) / 10.0 ORDER BY id)::float8[] AS p FROM cand;
CREATE TABLE lg AS SELECT * FROM gpudl_loss_grad('fam30', 'sibling_of', 'sib_pos', 'sib_neg', (SELECT p FROM probs));
SELECT round(loss::numeric, 6) AS loss, array_length(grad, 1) = (SELECT count(*) FROM cand) AS one_grad_per_candidate FROM lg;
CREATE FUNCTION loss_at(i int, h float8) RETURNS float8 LANGUAGE sql AS $$
  SELECT loss FROM gpudl_loss_grad('fam30', 'sibling_of', 'sib_pos', 'sib_neg',
    (SELECT array_agg(CASE WHEN k = i THEN v + h ELSE v END ORDER BY k)
     FROM unnest((SELECT p FROM probs)) WITH ORDINALITY AS u(v, k)))
$$;
SELECT count(*) AS checked,
       max(abs((loss_at(i, 1e-5) - loss_at(i, -1e-5)) / 2e-5 - (SELECT grad[i] FROM lg))) < 1e-4 AS gradient_matches
FROM generate_series(1, (SELECT count(*)::int FROM cand)) i;

-- errors: bad arguments; every failed call is still recorded (after its
-- transaction rolled back, by a background worker), except for NULL arguments
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', max_body => 0);
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', max_body => 9);
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', max_rules => 0);
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', learning_rate => 0);
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', epochs => -1);
SELECT * FROM gpudl_learn('fam30', '', 'gp_pos');
SELECT * FROM gpudl_learn('fam30', 'father', 'gp_pos');
SELECT * FROM gpudl_learn('nosuch', 'grandparent', 'gp_pos');
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'SELECT a, b FROM gp_pos WHERE false');
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'SELECT a, b, a FROM gp_pos');
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'SELECT 1, 2');
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'gp_pos', 'SELECT a FROM gp_neg');
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'no_such_table');
SELECT * FROM gpudl_learn('fam30', 'grandparent', NULL);
SELECT * FROM gpudl_candidates('fam30', 'grandparent', 3);
SELECT * FROM gpudl_loss_grad('fam30', 'sibling_of', 'sib_pos', 'sib_neg', ARRAY[0.5]);
SELECT * FROM gpudl_loss_grad('fam30', 'sibling_of', 'sib_pos', 'sib_neg', ARRAY[1.5]);
SELECT gpudl_commit_rule('fam30', 'bad(X) :- nowhere(X).');
SELECT * FROM gpudl_derivations('fam30', 'grandparent(X, bart)');
SELECT count(*) AS failed_runs_recorded FROM gpudl.learn_runs WHERE status = 'failed';
-- a call that fails while running (here in the positives query) too
SELECT * FROM gpudl_learn('fam30', 'grandparent', 'SELECT a, b FROM gp_pos WHERE 1 / (length(a) - length(a)) = 1');
SELECT target, message, params->>'positives' AS positives, finished_at IS NOT NULL AS finished
FROM gpudl.learn_runs WHERE status = 'failed' ORDER BY id;
