-- gpudl 0.2 -> 0.3: knowledge-graph mining and prediction, rule learning
-- over relational data (any arity, types, time budget, noise).
-- Every section keeps what a 0.2 user has: programs, rules, bindings, grants,
-- learn runs.  CREATE EXTENSION runs gpudl--0.1.sql and every update script
-- in turn, so a new install and an updated one end the same.
\echo Use "ALTER EXTENSION gpudl UPDATE TO '0.3'" to load this file. \quit

-- ------------------------------------------------------------ mining (KG)

-- ------------------------------------------------------------ prediction (KG)

-- ------------------------------------------------------------ rule learning
