-- bench/kg/load.sql — load one knowledge graph (psql variables: dir, program)
-- into tables and a gpudl program: triples(h, r, t, split) from
-- facts/train/valid/test.txt; the graph (facts ∪ train) as one view per
-- relation, bound to predicate lower(relation) of the program.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS triples, entities, relations CASCADE;
CREATE TABLE triples(h text, r text, t text, split text);
CREATE TEMP TABLE raw(h text, r text, t text);
\set f :dir '/facts.txt'
COPY raw FROM :'f';
INSERT INTO triples SELECT h, r, t, 'facts' FROM raw; TRUNCATE raw;
\set f :dir '/train.txt'
COPY raw FROM :'f';
INSERT INTO triples SELECT h, r, t, 'train' FROM raw; TRUNCATE raw;
\set f :dir '/valid.txt'
COPY raw FROM :'f';
INSERT INTO triples SELECT h, r, t, 'valid' FROM raw; TRUNCATE raw;
\set f :dir '/test.txt'
COPY raw FROM :'f';
INSERT INTO triples SELECT h, r, t, 'test' FROM raw;
CREATE INDEX ON triples(r, h, t);
CREATE INDEX ON triples(r, t, h);
CREATE TABLE entities(e text PRIMARY KEY);
\set f :dir '/entities.txt'
COPY entities FROM :'f';
-- every entity a triple mentions counts, listed or not
INSERT INTO entities SELECT h FROM triples UNION SELECT t FROM triples ON CONFLICT DO NOTHING;
CREATE TABLE relations AS SELECT DISTINCT r, lower(r) AS pred FROM triples ORDER BY 1;
ANALYZE triples, entities, relations;

SELECT set_config('kg.program', :'program', false);
SELECT gpudl_drop_program(:'program') FROM gpudl.programs WHERE name = :'program';
SELECT gpudl_create_program(:'program', NULL, 'link prediction benchmark graph: facts + train');
DO $$
DECLARE rel record;
BEGIN
  FOR rel IN SELECT * FROM relations LOOP
    EXECUTE format('CREATE VIEW %I AS SELECT h, t FROM triples WHERE r = %L AND split IN (''facts'', ''train'')',
                   'g_' || rel.pred, rel.r);
    PERFORM gpudl_bind(current_setting('kg.program'), rel.pred, 'g_' || rel.pred);
  END LOOP;
END $$;
