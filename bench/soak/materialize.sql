-- bench/soak/materialize.sql — into a table of this client's own
SELECT gpudl_materialize('soak', 'tc', 'soak_mat_' || :client_id);
SELECT gpudl_materialize('soak', 'deg', 'soak_deg_' || :client_id, 'append');
