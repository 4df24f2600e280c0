-- gpudl 0.7 -> 0.8: a committed mining run's rules stored with less work
-- per row.  gpudl_mine(..., commit => true) now writes gpudl.mined_rules
-- in bulk (src/pg/pg_mined_store.c); two costs per row were left in the
-- catalog itself:
-- * the id, one nextval of the shared sequence each: a session now takes
--   them 1,000 at a time (1.7 M ids: 1.18 s uncached, 0.74 s cached, on
--   the 2-core machine).  Ids stay unique, and increasing within a session,
--   so within a run (gpudl_predict reads a relation's rules in id order);
--   ids of different sessions interleave and a session's unused ids are
--   skipped, as with any cached sequence;
-- * the index by (program, target, id) tried to deduplicate every full
--   page before splitting it, although its keys end in the unique id and
--   there is never anything to merge (about a tenth of its insertions).
-- Nothing a 0.7 user has changes.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.8'" to load this file. \quit

ALTER SEQUENCE gpudl.mined_rules_id_seq CACHE 1000;
ALTER INDEX gpudl.mined_rules_program_idx SET (deduplicate_items = off);
