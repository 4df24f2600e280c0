-- bench/soak/owner_edit.sql — the program's owner adds a rule, uses it, removes it
SELECT soak_owner_edit(:client_id);
