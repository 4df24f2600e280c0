-- bench/soak/mine.sql — the owner mines the family's rules for child and
-- commits them (replacing the stored ones), while other clients predict
SELECT count(*) FROM gpudl_mine('soakfam', 'child', max_body => 2, commit => true);
