-- bench/soak/count.sql — counted in the engine
SELECT gpudl_count('soak', 'tc(X, Y)');
SELECT gpudl_count('soak', 'reach_from_1(Y)');
SELECT gpudl_count('soak', 'deg(X, N)');
