-- gpudl 0.7 -> 0.8: a committed mining run's rules stored faster.
-- gpudl_mine(..., commit => true) now writes gpudl.mined_rules in bulk
-- (src/pg/pg_mined_store.c); what was left per rule is its id, one nextval
-- of the shared sequence each (about 6 of the 18 s that storing
-- FB15k-237's 1.7 M rules took on 2 cores).  A session now takes the ids
-- 1,000 at a time.  They stay unique, and increasing within a session, so
-- within a run (gpudl_predict reads a relation's rules in id order); ids
-- of different sessions interleave and a session's unused ids are
-- skipped, as with any cached sequence.  The index by (program, target,
-- id) no longer tries to deduplicate a full page before splitting it: its
-- keys end in the unique id, so there is never anything to merge, and the
-- attempt was a tenth of its insertion time.  Nothing a 0.7 user has
-- changes.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.8'" to load this file. \quit

ALTER SEQUENCE gpudl.mined_rules_id_seq CACHE 1000;
ALTER INDEX gpudl.mined_rules_program_idx SET (deduplicate_items = off);
