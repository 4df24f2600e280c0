-- bench/soak/query.sql — rows out of the engine, a bound goal and a negation
SELECT count(*) FROM gpudl_query('soak', 'tc(X, Y)') AS t(a int, b int);
SELECT count(*) FROM gpudl_query('soak', 'tc(X, Y)') AS t(a int, b int) WHERE a = :client_id;
SELECT count(*) FROM gpudl_query('soak', 'sink(X)') AS t(a int);
