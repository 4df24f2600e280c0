/*
 * api_derive.c — working with learned rules: gpudl_commit_rule (keep a rule
 * in the program), gpudl_sample_false_positives (what the program derives
 * that a reference set does not hold) and gpudl_derivations (which rules
 * derive a given ground fact).
 */
#include "pg/gpudl_learn.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(gpudl_commit_rule);
PG_FUNCTION_INFO_V1(gpudl_sample_false_positives);
PG_FUNCTION_INFO_V1(gpudl_derivations);

/*
 * gpudl_commit_rule(program, rule): validate the rule (with the clauses of
 * any invented predicate it carries) against the program and store it with
 * learned = true; returns the id of its first row.
 */
Datum
gpudl_commit_rule(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *rule = gpudl_text_arg(fcinfo, 1, "rule");
	List	   *ids = gpudl_insert_rules_text(program, rule, true);

	PG_RETURN_INT64((int64) (intptr_t) linitial(ids));
}

/* Hash key of a row of at most 8 columns (rows of wider goals are compared whole). */
typedef struct RowKey
{
	int64_t		v[8];
} RowKey;

/*
 * gpudl_sample_false_positives(program, goal, exclude, max_n): up to max_n
 * answers of the goal that are not rows of 'exclude' (a query or table of
 * known true facts), in a stable order.  Typical use: negatives for the next
 * gpudl_learn call, or a sample to label by hand.
 */
Datum
gpudl_sample_false_positives(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *goal_text = gpudl_text_arg(fcinfo, 1, "goal");
	char	   *exclude = gpudl_text_arg(fcinfo, 2, "exclude");
	int32		max_n = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudlRun   *run;
	GdlColumns *ex;
	GdlType    *extypes;
	TupleDesc	desc;
	HTAB	   *known;
	HASHCTL		hc;
	int			ncols,
				c;
	size_t		r;
	int32		emitted = 0;
	int			token;

	if (PG_ARGISNULL(3) || max_n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_n must be a non-negative integer")));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	gpudl_memory_reset();
	desc = rsinfo->setDesc;
	token = gpudl_progress_begin("query", program, goal_text);
	run = gpudl_run_goal(program, goal_text, true);
	gpudl_progress_phase("returning");
	ncols = run->result->rows.ncols;
	gpudl_check_result_desc(desc, run, goal_text);
	if (ncols > 8)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("goals of more than 8 arguments are not supported here")));
	ex = gpudl_read_examples(exclude, "exclude set", run->dict, &extypes);
	if (ex->ncols != ncols)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the exclude set has %d columns but goal \"%s\" has %d",
						ex->ncols, goal_text, ncols)));

	memset(&hc, 0, sizeof(hc));
	hc.keysize = sizeof(RowKey);
	hc.entrysize = sizeof(RowKey);
	hc.hcxt = CurrentMemoryContext;
	known = hash_create("gpudl exclude", Max(ex->nrows, 16), &hc, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (r = 0; r < ex->nrows; r++)
	{
		RowKey		k;

		memset(&k, 0, sizeof(k));
		for (c = 0; c < ncols; c++)
			k.v[c] = ex->cols[c][r];
		(void) hash_search(known, &k, HASH_ENTER, NULL);
	}
	for (r = 0; r < run->result->rows.nrows && emitted < max_n; r++)
	{
		RowKey		k;
		Datum		v[8];
		bool		nulls[8] = {0};

		memset(&k, 0, sizeof(k));
		for (c = 0; c < ncols; c++)
			k.v[c] = run->result->rows.cols[c][r];
		if (hash_search(known, &k, HASH_FIND, NULL))
			continue;
		for (c = 0; c < ncols; c++)
			v[c] = gpudl_value_to_datum(k.v[c], run->result->types[c],
										TupleDescAttr(desc, c)->atttypid, run->dict);
		tuplestore_putvalues(rsinfo->setResult, desc, v, nulls);
		emitted++;
	}
	gpudl_progress_end(token);
	return (Datum) 0;
}

/*
 * Does 'clause' derive the ground fact in one step from the program's least
 * fixpoint?  The clause's body is asked as a rule for a probe predicate
 * whose head is the clause's head; its goal is the fact.
 */
static bool
clause_derives(GpudlProgramDef *def, const GdlClause *clause, const GdlAtom *fact)
{
	GdlClause	renamed = *clause;
	char	   *text;
	GpudlProgramDef probe = *def;
	GdlAnalysis *a;
	GdlPlan    *plan;
	GpudlGoalSpec *gs;
	GdlDict    *dict;
	GdlRunInput in;
	StringInfoData goal;
	int			i;

	/* the clause under the probe's name (its own may be quoted: "a(b"(X)) */
	renamed.head.name = "gpudl_derivation_probe";
	text = gdl_clause_to_string(&renamed);
	probe.prog = gdl_alloc(sizeof(GdlProgram));
	gdl_program_append(probe.prog, def->prog);
	gdl_program_append(probe.prog, gpudl_parse_text(text, "derivation probe"));
	a = gpudl_analyze_program(&probe);
	plan = gdl_plan_compile(a);
	initStringInfo(&goal);
	appendStringInfoString(&goal, "gpudl_derivation_probe(");
	for (i = 0; i < fact->nargs; i++)
		appendStringInfo(&goal, "%s%s", i ? ", " : "", gdl_term_to_string(clause, fact->args[i]));
	appendStringInfoChar(&goal, ')');
	gs = gpudl_parse_goal(a, goal.data);
	dict = gdl_dict_create();
	memset(&in, 0, sizeof(in));
	in.load_edb = gpudl_load_edb;
	in.device = GDL_DEVICE_CPU;
	in.max_iterations = gpudl_max_iterations;
	return gdl_run(plan, &in, dict, gpudl_encode_goal(gs, dict))->count > 0;
}

/*
 * gpudl_derivations(program, fact): the enabled rules (and facts) of the
 * program that derive the ground fact, e.g. 'path(1, 7)'.
 */
Datum
gpudl_derivations(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *fact_text = gpudl_text_arg(fcinfo, 1, "fact");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudlProgramDef *def;
	GdlAnalysis *a;
	GpudlGoalSpec *gs;
	const GdlAtom *fact;
	GdlProgram *fp;
	int			i,
				k;

	gpudl_install_host();
	gpudl_memory_reset();
	def = gpudl_load_program(program);
	a = gpudl_analyze_program(def);
	gs = gpudl_parse_goal(a, fact_text);
	fp = gpudl_parse_text(psprintf("%s.", fact_text), NULL);
	fact = &fp->items[0].clause->head;
	for (k = 0; k < fact->nargs; k++)
		if (fact->args[k]->kind == GDL_TERM_VAR || fact->args[k]->kind == GDL_TERM_ANON)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fact \"%s\" must be ground", fact_text),
					 errhint("Write constants for every argument, e.g. path(1, 7).")));
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < a->nclauses; i++)
	{
		const GdlClauseInfo *ci = &a->clauses[i];
		Datum		v[2];
		bool		nulls[2] = {0};

		if (ci->head_pred != gs->pred)
			continue;
		CHECK_FOR_INTERRUPTS();
		if (!clause_derives(def, ci->clause, fact))
			continue;
		v[0] = Int64GetDatum(a->prog->items[ci->item].rule_id);
		v[1] = CStringGetTextDatum(ci->clause->text);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}
