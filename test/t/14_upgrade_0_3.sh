#!/usr/bin/env bash
# 14_upgrade_0_3: ALTER EXTENSION gpudl UPDATE from 0.3 keeps every program,
# rule, binding, owner, grant, learn run and mined rule of several roles, and
# the programs answer and predict the same after.  A 0.3 catalog is filled
# through the current library (which must keep working on it until the
# update), then updated in place.  Sections below the "0.4 features" line
# check that what 0.4 adds works on the updated catalog.
source "$(dirname "$0")/../../tools/pgenv.sh"
set -e
export PGOPTIONS="-c client_min_messages=warning"
db=gpudl_upgrade03
source "$(dirname "$0")/lib/upgrade.sh"
upgrade_setup upg3_ann upg3_bob
run >/dev/null <<SQL
CREATE EXTENSION gpudl VERSION '0.3';
$(upgrade_sql_family_tables)
GRANT SELECT ON parent, gp_pos, sib TO upg3_ann, upg3_bob;
SELECT gpudl_create_program('family', 'anc(X, Y) :- parent(X, Y). anc(X, Z) :- anc(X, Y), parent(Y, Z).', 'ancestors');
SELECT gpudl_bind('family', 'sib', 'sib');
SELECT count(*) FROM gpudl_learn('family', 'gp', 'gp_pos', max_rules => 2, commit => true);
SELECT count(*) FROM gpudl_mine('family', 'sib', max_body => 2, commit => true);
SELECT gpudl_grant('family', 'upg3_bob', 'use');
$(upgrade_sql_role_programs upg3)
SQL
upgrade_check_installed 0.3

state=$(upgrade_state_sql 'answer, score, rank')
upgrade_snapshot 40
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules")" -gt 0 ] || { echo "no mined rules before the update"; exit 1; }

upgrade_update
# owners still hold: bob may use family but not change it, nor ann's mined rules
upgrade_check_bob upg3_bob 2 <<'SQL'
DO $$ BEGIN PERFORM gpudl_add_rules('family', 'x(X) :- parent(X, _).'); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
DO $$ BEGIN PERFORM gpudl_mine('family', 'sib', commit => true); RAISE NOTICE 'not refused';
  EXCEPTION WHEN insufficient_privilege THEN RAISE NOTICE 'refused'; END $$;
SQL

# ---------------------------------------------------------------- 0.4 features
# (each 0.4 addition appends a check here that it works on the updated catalog)

# mining with constants (gpudl_mine's new argument), committed, and
# gpudl_predict scoring with the stored constant rules
nconst=$(run -At -c "SELECT count(*) FROM gpudl_mine('family', 'sib', max_body => 2, commit => true, constants => true) WHERE rule LIKE '%\"%'")
[ "$nconst" -gt 0 ] || { echo "0.4: no rules with constants mined"; exit 1; }
[ "$(run -At -c "SELECT count(*) FROM gpudl.mined_rules WHERE program = 'family' AND target = 'sib' AND rule LIKE '%\"%' AND (params->>'constants')::boolean")" = "$nconst" ] \
  || { echo "0.4: the constant rules were not stored"; exit 1; }
used=$(PGOPTIONS="-c client_min_messages=notice" run -At -c "SELECT count(*) FROM gpudl_predict('family', 'sib', 'sib(\"bart\", Y)', exclude_known => false, \"limit\" => 0), unnest(rules) r WHERE r LIKE '%\"%'" 2>&1)
[ "$used" -gt 0 ] 2>/dev/null || { echo "0.4: gpudl_predict did not use the stored constant rules: $used"; exit 1; }
# several GPUs (issue 14): a partitioned run of a 0.3 program gives its 0.3 answer
# (3 partitions on the CPU backend; the settings are GUCs, no catalog change)
parts=$(run -At -c "SET gpudl.device = cpu; SET gpudl.partitions = 3;
  SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;")
[ "$parts" = "$(run -At -c "SELECT * FROM gpudl_query('family', 'anc(X, Y)') AS t(a text, b text) ORDER BY 1, 2;")" ] \
  || { echo "a partitioned run differs after the update: $parts"; exit 1; }
[ "$(run -At -c "SET gpudl.device = cpu; SET gpudl.partitions = 3; SELECT gpudl_count('facts', 'tc(X, Y)');
  SELECT count(*) FROM gpudl_device_info() WHERE backend = 'partition'" | tail -1)" = 3 ] \
  || { echo "no partition rows in gpudl_device_info after a partitioned run"; exit 1; }

upgrade_cleanup upg3_ann upg3_bob
echo "update 0.3 -> $latest: catalog, owners, grants, mined rules and answers identical"
