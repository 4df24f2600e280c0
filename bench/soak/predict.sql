-- bench/soak/predict.sql — ranked children of one person, with the stored
-- rules when some are committed (else rules mined for the call)
\set g random(0, 6)
\set i random(0, 7)
SELECT count(*) FROM gpudl_predict('soakfam', 'child', format('child(X, "p%s_%s")', :g, :i), exclude_known => false);
