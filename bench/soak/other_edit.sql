-- bench/soak/other_edit.sql — a role that does not own the program edits it
-- (refused with 42501 once ownership is enforced; swallowed in the function)
SELECT soak_other_edit(:client_id);
SELECT gpudl_count('soak', 'tc(X, Y)');
