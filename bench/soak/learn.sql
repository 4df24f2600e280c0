-- bench/soak/learn.sql — learn grandparent from the small family
SELECT count(*) FROM gpudl_learn('soakfam', 'grandparent', 'gp_pos', 'gp_neg', epochs => 100);
