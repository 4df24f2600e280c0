-- gpudl 0.3 -> 0.4: rules with constants in mining and prediction, the
-- memory-lean and partitioned fixpoint's settings, rule learning refinements.
-- Every section keeps what a 0.3 user has: programs, rules, bindings, grants,
-- learn runs, mined rules.  CREATE EXTENSION runs gpudl--0.1.sql and every
-- update script in turn, so a new install and an updated one end the same.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.4'" to load this file. \quit

-- ------------------------------------------------------------ mining (KG)

-- ------------------------------------------------------------ prediction (KG)

-- ------------------------------------------------------------ rule learning

-- ------------------------------------------------------------ several GPUs
-- Nothing in the catalog: the partitioned fixpoint (issue 14) is set by the
-- GUCs gpudl.partitions (0: one per GPU of gpudl.devices; > 1 forces that
-- many partitions, also on one GPU or the CPU) and gpudl.devices ('all' or
-- a list such as '0,1'); EXPLAIN ANALYZE and gpudl_device_info() show the
-- partitions of a run (rows with backend 'partition').
