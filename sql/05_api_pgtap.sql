-- 05_api_pgtap: the API contract of PRODUCT.md sections 1 and 3 (pgTAP).
\set ECHO none
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off
SET client_min_messages = warning;
LOAD 'gpudl';  -- settings exist once the library is loaded
SELECT plan(141);

-- schema layout: functions in the extension's schema, catalog in gpudl
SELECT has_schema('gpudl');
SELECT has_table('gpudl', 'programs', 'catalog table programs');
SELECT has_table('gpudl', 'rules', 'catalog table rules');
SELECT has_table('gpudl', 'bindings', 'catalog table bindings');
SELECT has_table('gpudl', 'learn_runs', 'catalog table learn_runs');
SELECT has_table('gpudl', 'learned_rules', 'catalog table learned_rules');
SELECT has_table('gpudl', 'mined_rules', 'catalog table mined_rules (0.3)');

SELECT columns_are('gpudl', 'programs',
    ARRAY['name', 'description', 'version', 'created_at', 'updated_at', 'owner', 'acl']);
SELECT col_is_pk('gpudl', 'programs', 'name', 'col_is_pk gpudl, programs, name');
SELECT col_type_is('gpudl', 'programs', 'version', 'bigint', 'col_type_is gpudl, programs, version, bigint');
SELECT col_type_is('gpudl', 'programs', 'owner', 'regrole', 'col_type_is gpudl, programs, owner, regrole');
SELECT col_not_null('gpudl', 'programs', 'owner', 'col_not_null gpudl, programs, owner');
SELECT col_type_is('gpudl', 'programs', 'acl', 'aclitem[]', 'col_type_is gpudl, programs, acl, aclitem[]');

SELECT columns_are('gpudl', 'rules',
    ARRAY['id', 'program', 'rule', 'head', 'learned', 'enabled', 'weight', 'created_at']);
SELECT col_is_pk('gpudl', 'rules', 'id', 'col_is_pk gpudl, rules, id');
SELECT col_type_is('gpudl', 'rules', 'id', 'bigint', 'col_type_is gpudl, rules, id, bigint');
SELECT col_not_null('gpudl', 'rules', 'rule', 'col_not_null gpudl, rules, rule');
SELECT col_default_is('gpudl', 'rules', 'learned', 'false', 'col_default_is gpudl, rules, learned, false');
SELECT col_default_is('gpudl', 'rules', 'enabled', 'true', 'col_default_is gpudl, rules, enabled, true');
SELECT col_type_is('gpudl', 'rules', 'weight', 'double precision', 'col_type_is gpudl, rules, weight, double precision');
SELECT fk_ok('gpudl', 'rules', 'program', 'gpudl', 'programs', 'name');

SELECT columns_are('gpudl', 'bindings', ARRAY['program', 'predicate', 'relation', 'columns']);
SELECT col_is_pk('gpudl', 'bindings', ARRAY['program', 'predicate'], 'col_is_pk gpudl, bindings, array[program, predicate]');
SELECT col_type_is('gpudl', 'bindings', 'relation', 'regclass', 'col_type_is gpudl, bindings, relation, regclass');
SELECT col_type_is('gpudl', 'bindings', 'columns', 'name[]', 'col_type_is gpudl, bindings, columns, name[]');

SELECT columns_are('gpudl', 'learn_runs',
    ARRAY['id', 'program', 'target', 'status', 'device', 'params', 'started_at',
          'finished_at', 'epochs', 'final_loss', 'message', 'run_by',
          'backend_pid', 'backend_start', 'backend_xid', 'timed_out']);
SELECT col_type_is('gpudl', 'learn_runs', 'params', 'jsonb', 'col_type_is gpudl, learn_runs, params, jsonb');
SELECT col_type_is('gpudl', 'learn_runs', 'run_by', 'regrole', 'col_type_is gpudl, learn_runs, run_by, regrole');
SELECT columns_are('gpudl', 'learned_rules',
    ARRAY['run_id', 'rank', 'rule', 'probability', 'loss', 'precision', 'recall',
          'support', 'head_coverage', 'std_confidence', 'pca_confidence', 'committed']);

-- pg_dump keeps the user's rows
SELECT set_eq(
    $$SELECT unnest(extconfig)::regclass::text FROM pg_extension WHERE extname = 'gpudl'$$,
    ARRAY['gpudl.programs', 'gpudl.rules', 'gpudl.rules_id_seq', 'gpudl.bindings',
          'gpudl.learn_runs', 'gpudl.learn_runs_id_seq', 'gpudl.learned_rules',
          'gpudl.mined_rules', 'gpudl.mined_rules_id_seq', 'gpudl.maintained_targets'],
    'catalog tables are registered with pg_extension_config_dump');
SELECT is((SELECT extrelocatable FROM pg_extension WHERE extname = 'gpudl'), false,
    'the extension is not relocatable');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'gpudl'), '0.9', 'version 0.9');

-- ownership (PRODUCT.md section 7): row-level security on the catalog
SELECT ok((SELECT bool_and(relrowsecurity) FROM pg_class
           WHERE oid IN ('gpudl.programs'::regclass, 'gpudl.rules'::regclass, 'gpudl.bindings'::regclass,
                         'gpudl.learn_runs'::regclass, 'gpudl.learned_rules'::regclass, 'gpudl.mined_rules'::regclass)),
    'row-level security is enabled on the user-data catalog tables');
SELECT policies_are('gpudl', 'rules', ARRAY['rules_select', 'rules_insert', 'rules_update', 'rules_delete']);
SELECT policies_are('gpudl', 'bindings',
    ARRAY['bindings_select', 'bindings_insert', 'bindings_update', 'bindings_delete']);
SELECT policies_are('gpudl', 'programs',
    ARRAY['programs_select', 'programs_insert', 'programs_update', 'programs_delete']);
SELECT policies_are('gpudl', 'learn_runs',
    ARRAY['learn_runs_select', 'learn_runs_insert', 'learn_runs_update', 'learn_runs_delete']);
SELECT policies_are('gpudl', 'learned_rules', ARRAY['learned_rules_all']);
SELECT policies_are('gpudl', 'mined_rules',
    ARRAY['mined_rules_select', 'mined_rules_insert', 'mined_rules_update', 'mined_rules_delete']);
SELECT columns_are('gpudl', 'mined_rules',
    ARRAY['id', 'program', 'target', 'rule', 'support', 'head_coverage', 'std_confidence',
          'pca_confidence', 'body_size', 'pca_body_size', 'nbody', 'params', 'mined_by', 'mined_at']);
SELECT fk_ok('gpudl', 'mined_rules', 'program', 'gpudl', 'programs', 'name');
SELECT has_function('public', 'gpudl_grant', ARRAY['text', 'text', 'text']);
SELECT function_returns('public', 'gpudl_grant', ARRAY['text', 'text', 'text'], 'void');
SELECT has_function('public', 'gpudl_revoke', ARRAY['text', 'text', 'text']);
SELECT function_returns('public', 'gpudl_revoke', ARRAY['text', 'text', 'text'], 'void');
SELECT has_function('public', 'gpudl_grant', ARRAY['text', 'regrole', 'text'], 'gpudl_grant takes a regrole too');
SELECT has_function('public', 'gpudl_revoke', ARRAY['text', 'regrole', 'text'], 'gpudl_revoke takes a regrole too');
SELECT is(pg_get_function_arguments('gpudl_grant(text,text,text)'::regprocedure),
    'program text, role text, privilege text', 'gpudl_grant argument names');
SELECT is(pg_get_function_arguments('gpudl_revoke(text,text,text)'::regprocedure),
    'program text, role text, privilege text', 'gpudl_revoke argument names');
SELECT is((SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
           JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'gpudl'
           WHERE p.prosecdef AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)),
    0::bigint, 'every SECURITY DEFINER function pins search_path = pg_catalog, pg_temp');

-- function signatures of PRODUCT.md section 3
SELECT has_function('public', 'gpudl_create_program', ARRAY['text', 'text', 'text']);
SELECT function_returns('public', 'gpudl_create_program', ARRAY['text', 'text', 'text'], 'text');
SELECT has_function('public', 'gpudl_add_rules', ARRAY['text', 'text']);
SELECT function_returns('public', 'gpudl_add_rules', ARRAY['text', 'text'], 'setof bigint');
SELECT has_function('public', 'gpudl_drop_program', ARRAY['text']);
SELECT function_returns('public', 'gpudl_drop_program', ARRAY['text'], 'void');
SELECT has_function('public', 'gpudl_bind', ARRAY['text', 'text', 'regclass', 'name[]']);
SELECT function_returns('public', 'gpudl_bind', ARRAY['text', 'text', 'regclass', 'name[]'], 'void');
SELECT has_function('public', 'gpudl_explain', ARRAY['text']);
SELECT function_returns('public', 'gpudl_explain', ARRAY['text'], 'setof text');
SELECT is(pg_get_function_arguments('gpudl_create_program(text,text,text)'::regprocedure),
    'name text, rules text DEFAULT NULL::text, description text DEFAULT NULL::text',
    'gpudl_create_program argument names and defaults');
SELECT is(pg_get_function_arguments('gpudl_bind(text,text,regclass,name[])'::regprocedure),
    'program text, predicate text, relation regclass, columns name[] DEFAULT NULL::name[]',
    'gpudl_bind argument names and defaults');
SELECT is(pg_get_function_arguments('gpudl_add_rules(text,text)'::regprocedure),
    'program text, rules text', 'gpudl_add_rules argument names');
SELECT has_function('public', 'gpudl_query', ARRAY['text', 'text']);
SELECT function_returns('public', 'gpudl_query', ARRAY['text', 'text'], 'setof record');
SELECT has_function('public', 'gpudl_count', ARRAY['text', 'text']);
SELECT function_returns('public', 'gpudl_count', ARRAY['text', 'text'], 'bigint');
SELECT has_function('public', 'gpudl_materialize', ARRAY['text', 'text', 'text', 'text']);
SELECT function_returns('public', 'gpudl_materialize', ARRAY['text', 'text', 'text', 'text'], 'bigint');
SELECT is(pg_get_function_arguments('gpudl_materialize(text,text,text,text)'::regprocedure),
    'program text, predicate text, target text, mode text DEFAULT ''replace''::text',
    'gpudl_materialize argument names and defaults');
SELECT has_function('public', 'gpudl_learn',
    ARRAY['text', 'text', 'text', 'text', 'integer', 'integer', 'integer', 'double precision',
          'boolean', 'integer', 'integer', 'boolean', 'text', 'double precision', 'double precision',
          'text', 'integer', 'text']);
SELECT is(pg_get_function_arguments('gpudl_learn(text,text,text,text,int,int,int,float8,boolean,int,int,boolean,text,float8,float8,text,int,text)'::regprocedure),
    'program text, target text, positives text, negatives text DEFAULT NULL::text, max_body integer DEFAULT 2, '
    'max_rules integer DEFAULT 32, epochs integer DEFAULT 200, learning_rate double precision DEFAULT 0.1, '
    'allow_recursive boolean DEFAULT false, min_support integer DEFAULT 1, seed integer DEFAULT 0, '
    'commit boolean DEFAULT false, negative_sampling text DEFAULT ''closed_world''::text, '
    'max_seconds double precision DEFAULT NULL::double precision, noise double precision DEFAULT 0, '
    'types text DEFAULT NULL::text, max_vars integer DEFAULT NULL::integer, method text DEFAULT ''auto''::text',
    'gpudl_learn argument names and defaults (PRODUCT.md, plus negative_sampling and the 0.3 arguments)');
SELECT is(pg_get_function_result('gpudl_learn(text,text,text,text,int,int,int,float8,boolean,int,int,boolean,text,float8,float8,text,int,text)'::regprocedure),
    'TABLE(rank integer, rule text, probability double precision, loss double precision, '
    '"precision" double precision, recall double precision, support bigint, head_coverage double precision, '
    'std_confidence double precision, pca_confidence double precision)',
    'gpudl_learn result columns');
SELECT is(pg_get_function_arguments('gpudl_candidates(text,text,int,int,boolean)'::regprocedure),
    'program text, target text, arity integer, max_body integer DEFAULT 2, allow_recursive boolean DEFAULT false',
    'gpudl_candidates arguments');
SELECT is(pg_get_function_result('gpudl_candidates(text,text,int,int,boolean)'::regprocedure),
    'TABLE(id integer, rule text, template text)', 'gpudl_candidates result');
SELECT is(pg_get_function_result('gpudl_loss_grad(text,text,text,text,float8[])'::regprocedure),
    'TABLE(loss double precision, grad double precision[])', 'gpudl_loss_grad result');
-- knowledge graphs (0.3): mining and link prediction (0.4: constants; 0.5:
-- the constants' own bounds, the anytime budget, rules_shown)
SELECT has_function('public', 'gpudl_mine',
    ARRAY['text', 'text', 'integer', 'double precision', 'double precision', 'bigint', 'boolean', 'boolean',
          'integer', 'double precision', 'double precision']);
SELECT is(pg_get_function_arguments('gpudl_mine(text,text,int,float8,float8,bigint,boolean,boolean,int,float8,float8)'::regprocedure),
    'program text, target text DEFAULT NULL::text, max_body integer DEFAULT 3, '
    'min_head_coverage double precision DEFAULT 0.01, min_confidence double precision DEFAULT 0.1, '
    'min_support bigint DEFAULT 1, commit boolean DEFAULT false, constants boolean DEFAULT false, '
    'max_body_constants integer DEFAULT NULL::integer, '
    'constants_min_head_coverage double precision DEFAULT NULL::double precision, '
    'max_seconds double precision DEFAULT NULL::double precision',
    'gpudl_mine argument names and defaults (PRODUCT.md, plus constants and their bounds, max_seconds)');
SELECT is(pg_get_function_result('gpudl_mine(text,text,int,float8,float8,bigint,boolean,boolean,int,float8,float8)'::regprocedure),
    'TABLE(target text, rule text, support bigint, head_coverage double precision, '
    'std_confidence double precision, pca_confidence double precision, body_size bigint, pca_body_size bigint)',
    'gpudl_mine result columns');
SELECT has_function('public', 'gpudl_predict',
    ARRAY['text', 'text', 'text', 'text', 'boolean', 'integer', 'integer', 'double precision',
          'double precision', 'text', 'double precision', 'boolean', 'integer', 'double precision[]']);
SELECT is(pg_get_function_arguments('gpudl_predict(text,text,text,text,boolean,int,int,float8,float8,text,float8,boolean,int,float8[])'::regprocedure),
    'program text, target text, query text, aggregation text DEFAULT ''max''::text, '
    'exclude_known boolean DEFAULT true, "limit" integer DEFAULT 10, max_body integer DEFAULT 3, '
    'min_head_coverage double precision DEFAULT 0.01, min_confidence double precision DEFAULT 0.1, '
    'confidence text DEFAULT ''std''::text, smoothing double precision DEFAULT 20, '
    'constants boolean DEFAULT false, rules_shown integer DEFAULT NULL::integer, '
    'weights double precision[] DEFAULT NULL::double precision[]',
    'gpudl_predict argument names and defaults (PRODUCT.md, plus confidence, smoothing, constants, rules_shown, weights)');
SELECT is(pg_get_function_result('gpudl_predict(text,text,text,text,boolean,int,int,float8,float8,text,float8,boolean,int,float8[])'::regprocedure),
    'TABLE(query text, answer text, score double precision, rank bigint, rules text[])',
    'gpudl_predict result columns');
-- 0.9: the weighted aggregation's weights learned from held-out triples
SELECT has_function('public', 'gpudl_fit_weights', ARRAY['text', 'text', 'text', 'double precision']);
SELECT is(pg_get_function_arguments('gpudl_fit_weights(text,text,text,float8)'::regprocedure),
    'program text, query text, confidence text DEFAULT ''std''::text, smoothing double precision DEFAULT 20',
    'gpudl_fit_weights argument names and defaults');
SELECT is(pg_get_function_result('gpudl_fit_weights(text,text,text,float8)'::regprocedure),
    'double precision[]', 'gpudl_fit_weights returns the weights');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE proname = 'gpudl_predict'), 1,
    'one gpudl_predict (the 0.8 signature dropped)');
-- 0.6: the knowledge graph kept between calls
SELECT is(pg_get_function_result('gpudl_kg_cache_status()'::regprocedure),
    'SETOF record', 'gpudl_kg_cache_status returns rows');
SELECT is(pg_get_function_arguments('gpudl_kg_cache_status()'::regprocedure),
    'OUT program text, OUT entity_type text, OUT relations integer, OUT entities bigint, OUT facts bigint, '
    'OUT rules bigint, OUT bytes bigint, OUT hits bigint, OUT built_at timestamp with time zone',
    'gpudl_kg_cache_status columns');
SELECT has_trigger('gpudl', 'mined_rules', 'gpudl_cache_invalidate', 'the changes of gpudl.mined_rules are counted');

-- 0.8: the ids of mined rules taken 1,000 at a time per session
SELECT is((SELECT cache_size FROM pg_sequences WHERE schemaname = 'gpudl' AND sequencename = 'mined_rules_id_seq'),
    1000::bigint, 'gpudl.mined_rules ids are cached per session');
SELECT is((SELECT reloptions FROM pg_class WHERE oid = 'gpudl.mined_rules_program_idx'::regclass),
    ARRAY['deduplicate_items=off'], 'the index of mined rules by program does not deduplicate');
SELECT columns_are('gpudl', 'mined_rules',
    ARRAY['id', 'program', 'target', 'rule', 'support', 'head_coverage', 'std_confidence', 'pca_confidence',
          'body_size', 'pca_body_size', 'nbody', 'params', 'mined_by', 'mined_at'],
    'gpudl.mined_rules keeps its columns (the bulk writer sets each by name)');

-- 0.7: maintained tables
SELECT function_returns('public', 'gpudl_refresh', ARRAY['regclass'], 'bigint');
SELECT is(pg_get_function_arguments('gpudl_materialize(text,text,text,text)'::regprocedure),
    'program text, predicate text, target text, mode text DEFAULT ''replace''::text',
    'gpudl_materialize keeps its arguments (mode maintain is a value)');
SELECT columns_are('gpudl', 'maintained_targets',
    ARRAY['target', 'program', 'predicate', 'strategy', 'why_recompute', 'maintained_by', 'search_path',
          'program_version', 'base_tables', 'rows', 'changes', 'last_change', 'last_change_ms',
          'last_change_rows', 'last_refresh', 'last_refresh_ms']);
SELECT col_type_is('gpudl', 'maintained_targets', 'target', 'regclass', 'maintained target is a regclass');
SELECT col_type_is('gpudl', 'maintained_targets', 'base_tables', 'regclass[]', 'base tables are regclass[]');
SELECT has_view('gpudl', 'maintained', 'the view gpudl.maintained exists');
SELECT columns_are('gpudl', 'maintained',
    ARRAY['target', 'program', 'predicate', 'mode', 'why_recompute', 'maintained_by', 'rows', 'changes',
          'last_change', 'last_change_ms', 'last_change_rows', 'last_refresh', 'last_refresh_ms', 'base_tables']);
SELECT ok(has_table_privilege('public', 'gpudl.maintained', 'SELECT')
          AND NOT has_table_privilege('public', 'gpudl.maintained_targets', 'INSERT'),
    'everyone reads gpudl.maintained; only gpudl writes its table');
SELECT has_trigger('gpudl', 'maintained_targets', 'maintained_forget', 'forgotten targets lose their triggers');
SELECT ok(EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'gpudl_maintained_on_drop' AND evtevent = 'sql_drop'),
    'dropping a target or a base table forgets the target');
SELECT is(current_setting('gpudl.kg_cache'), 'on', 'gpudl.kg_cache defaults to on');
SELECT function_returns('public', 'gpudl_commit_rule', ARRAY['text', 'text'], 'bigint');
SELECT function_returns('public', 'gpudl_sample_false_positives', ARRAY['text', 'text', 'text', 'integer'], 'setof record');
SELECT is(pg_get_function_result('gpudl_derivations(text,text)'::regprocedure),
    'TABLE(rule_id bigint, rule text)', 'gpudl_derivations result');
SELECT is(pg_get_function_result('gpudl_device_info()'::regprocedure),
    'TABLE(backend text, device text, memory_total bigint, memory_free bigint)', 'gpudl_device_info result');
SELECT is(pg_get_function_result('gpudl_stats()'::regprocedure),
    'TABLE(name text, value bigint)', 'gpudl_stats result');
SELECT function_returns('public', 'gpudl_load', ARRAY['regclass'], 'bigint');
SELECT function_returns('public', 'gpudl_unload', ARRAY['regclass'], 'void');
SELECT is(pg_get_function_result('gpudl_cache_status()'::regprocedure),
    'TABLE(relation regclass, rows bigint, bytes bigint, device text, loaded_at timestamp with time zone)',
    'gpudl_cache_status result');
SELECT ok((SELECT count(*) FROM gpudl_device_info() WHERE backend = 'cpu') = 1, 'the CPU is always a device');
SELECT ok((SELECT count(*) FROM gpudl_stats() WHERE name IN ('plan_cache_hits', 'plan_cache_misses',
    'bytes_to_device', 'bytes_from_device', 'device_transfers', 'last_iterations')) = 6,
    'gpudl_stats names plan cache, transfer and run counters');
SELECT hasnt_function('gpudl', 'gpudl_create_program', 'user functions are not in the catalog schema');

-- settings of PRODUCT.md section 4
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpudl.device'), 'auto', 'gpudl.device defaults to auto');
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpudl.device_memory_limit'), '0', 'gpudl.device_memory_limit defaults to 0');
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpudl.max_iterations'), '100000', 'gpudl.max_iterations defaults to 100000');
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpudl.cuda_library'), '$libdir/gpudl_cuda.so', 'gpudl.cuda_library default');
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpudl.batch_rows'), '33554432', 'gpudl.batch_rows defaults to 32 Mi rows');
SELECT throws_ok($$SET gpudl.device = 'tpu'$$, '22023', NULL, 'gpudl.device accepts only auto/cpu/gpu');
SELECT throws_ok($$SET gpudl.max_iterations = 0$$, '22023', NULL, 'gpudl.max_iterations must be positive');
SELECT throws_ok($$SET gpudl.no_such_setting = 1$$, '42602', NULL, 'the gpudl prefix is reserved');

-- behaviour of the catalog functions
CREATE TABLE tap_edge(a int, b int);
SELECT is(gpudl_create_program('tap', 'p(X, Y) :- tap_edge(X, Y).'), 'tap', 'create returns the name');
SELECT is((SELECT version FROM gpudl.programs WHERE name = 'tap'), 2::bigint, 'creating with rules bumps the version once');
SELECT is((SELECT owner::text FROM gpudl.programs WHERE name = 'tap'), current_user::text, 'the creator owns the program');
SELECT is((SELECT head FROM gpudl.rules WHERE program = 'tap'), 'p', 'head is filled in');
SELECT is((SELECT count(*) FROM gpudl_add_rules('tap', 'q(X) :- p(X, _). r(X) :- q(X).')), 2::bigint,
    'add_rules returns one id per clause');
SELECT is((SELECT version FROM gpudl.programs WHERE name = 'tap'), 3::bigint, 'add_rules bumps the version');
SELECT throws_ok($$SELECT gpudl_create_program('tap')$$, '42710', 'gpudl program "tap" already exists');
SELECT throws_ok($$SELECT gpudl_add_rules('nope', 'p(1).')$$, '42704', 'gpudl program "nope" does not exist');
SELECT throws_ok($$SELECT gpudl_drop_program('nope')$$, '42704', 'gpudl program "nope" does not exist');
SELECT throws_ok($$SELECT gpudl_add_rules('tap', 'p(X, Y) :- ')$$, '42601', NULL, 'syntax error');
SELECT throws_ok($$SELECT gpudl_add_rules('tap', 's(X) :- nowhere(X).')$$, '42P01', NULL, 'unknown table');
SELECT throws_ok($$SELECT gpudl_add_rules('tap', 's(X) :- tap_edge(X).')$$, '42804', NULL, 'arity mismatch');
SELECT throws_ok($$SELECT gpudl_add_rules('tap', 's(X, Y) :- tap_edge(X, Z).')$$, '42P17', NULL, 'unsafe rule');
SELECT throws_ok($$SELECT gpudl_add_rules('tap', 'n(X) :- tap_edge(X, _), !n(X).')$$, '42P17', NULL, 'unstratifiable');
SELECT is((SELECT count(*) FROM gpudl.rules WHERE program = 'tap'), 3::bigint, 'failed calls wrote nothing');
SELECT lives_ok($$SELECT gpudl_bind('tap', 'e2', 'tap_edge')$$, 'bind a predicate');
SELECT throws_ok($$SELECT gpudl_bind('tap', 'p', 'tap_edge')$$, '42P17', NULL, 'a derived predicate cannot be bound');
SELECT lives_ok($$SELECT gpudl_drop_program('tap')$$, 'drop the program');
SELECT is((SELECT count(*) FROM gpudl.rules WHERE program = 'tap'), 0::bigint, 'rules go with the program');

SELECT * FROM finish();
