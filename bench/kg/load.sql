-- bench/kg/load.sql — load one knowledge graph into tables and a gpudl
-- program (psql variable: program).  Reads psql's standard input (eval.sh
-- streams it): the triples as "head TAB relation TAB tail TAB split" (split
-- facts, train, valid or test), a line "\.", then the entities one a line
-- and "\." (COPY's text format: a backslash in the data is written "\\").
-- triples(h, r, t, split); the graph (facts ∪ train) as one view per
-- relation, kg_rel_<id>, bound to the predicate named exactly as the
-- relation is ('/film/film/genre', 'co-occurs_with', 'Term0'): rules write
-- such names quoted, "/film/film/genre"(X, Y).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS triples, entities, relations CASCADE;
CREATE TABLE triples(h text, r text, t text, split text);
\copy triples FROM pstdin
CREATE TABLE entities(e text PRIMARY KEY);
CREATE TEMP TABLE raw_entities(e text);
\copy raw_entities FROM pstdin
-- every entity a triple mentions counts, listed or not
INSERT INTO entities SELECT e FROM raw_entities UNION SELECT h FROM triples UNION SELECT t FROM triples
  ON CONFLICT DO NOTHING;
CREATE INDEX ON triples(r, h, t);
CREATE INDEX ON triples(r, t, h);
CREATE TABLE relations AS
  SELECT row_number() OVER (ORDER BY r)::int AS id, r FROM (SELECT DISTINCT r FROM triples) d;
ANALYZE triples, entities, relations;

-- The goal text gpudl writes for a predicate name and a text constant
-- (gdl_pred_name_to_buf, gpudl_kg_value_literal): score.sql matches
-- gpudl_predict's query column with these.
CREATE OR REPLACE FUNCTION kg_pred_text(name text) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT CASE WHEN name ~ '^[a-z][A-Za-z0-9_]*(\.[a-z][A-Za-z0-9_]*)?$' THEN name
              ELSE '"' || replace(replace(replace(replace(replace(name, '\', '\\'), '"', '\"'),
                                                      E'\n', '\n'), E'\t', '\t'), E'\r', '\r') || '"' END $$;
CREATE OR REPLACE FUNCTION kg_lit(v text) RETURNS text IMMUTABLE LANGUAGE sql AS $$
  SELECT '"' || replace(replace(replace(v, '\', '\\'), '"', '\"'), E'\n', '\n') || '"' $$;

SELECT set_config('kg.program', :'program', false);
SELECT gpudl_drop_program(:'program') FROM gpudl.programs WHERE name = :'program';
SELECT gpudl_create_program(:'program', NULL, 'link prediction benchmark graph: facts + train');
DO $$
DECLARE rel record;
BEGIN
  FOR rel IN SELECT * FROM relations ORDER BY id LOOP
    EXECUTE format('CREATE VIEW %I AS SELECT h, t FROM triples WHERE r = %L AND split IN (''facts'', ''train'')',
                   'kg_rel_' || rel.id, rel.r);
    PERFORM gpudl_bind(current_setting('kg.program'), rel.r, format('%I', 'kg_rel_' || rel.id));
  END LOOP;
END $$;
