-- bench/service/smoke.sql — a first check of the GPU service: a text
-- program and an integer program on gpudl.device = gpu, then the service's
-- view of itself.
CREATE EXTENSION IF NOT EXISTS gpudl;
SELECT * FROM gpudl_service_status();
CREATE TABLE IF NOT EXISTS sm_parent(a text, b text);
TRUNCATE sm_parent;
INSERT INTO sm_parent VALUES ('abe','homer'),('homer','bart'),('homer','lisa'),('lisa','zia');
SELECT gpudl_create_program('sm', 'anc(X,Y) :- sm_parent(X,Y). anc(X,Z) :- anc(X,Y), sm_parent(Y,Z).')
  WHERE NOT EXISTS (SELECT 1 FROM gpudl.programs WHERE name = 'sm');
SET gpudl.device = gpu;
SELECT gpudl_count('sm', 'anc(X,Y)');
SELECT * FROM gpudl_query('sm', 'anc(X,Y)') AS t(a text, b text) ORDER BY 1, 2;
CREATE TABLE IF NOT EXISTS sm_e(a int, b int);
TRUNCATE sm_e;
INSERT INTO sm_e SELECT i, i + 1 FROM generate_series(1, 3000) i;
SELECT gpudl_create_program('sme', 'tc(X,Y) :- sm_e(X,Y). tc(X,Z) :- tc(X,Y), sm_e(Y,Z).')
  WHERE NOT EXISTS (SELECT 1 FROM gpudl.programs WHERE name = 'sme');
SELECT gpudl_count('sme', 'tc(X,Y)');
SELECT name, value FROM gpudl_stats() WHERE name IN ('gpu_runs', 'cpu_fallbacks', 'last_peak_device_bytes');
SELECT * FROM gpudl_service_status();
