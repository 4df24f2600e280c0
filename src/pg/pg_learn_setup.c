/*
 * pg_learn_setup.c — the PostgreSQL side of rule learning: builds the ILP
 * problem (background relations from a program's tables, bindings and
 * derived predicates; examples from queries) and evaluates learned programs
 * to fixpoint with the Datalog engine for true precision and recall.
 */
#include "pg/gpudl_learn.h"

#include <ctype.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/resowner.h"
#include "utils/builtins.h"

/*
 * Refuse a target name no rule can define: the empty name (42602), and one
 * that reads as schema.table (22023: derived predicates are not tables).
 * Any other name is written quoted where it needs it ("Child-Of"(X, Y)).
 */
static void
check_target_name(const char *name)
{
	if (name == NULL || name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("target predicate name must not be empty"),
				 errhint("Any other text is a predicate name; rules write names other than "
						 "lower-case identifiers in quotes, as in \"Has Car\"(X, Y).")));
	if (strchr(name, '.') != NULL && !gdl_name_needs_quotes(name))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid target predicate name \"%s\": it reads as a schema-qualified table", name),
				 errhint("Learn a derived predicate: a name without the form schema.table.")));
}

/* Add one background relation. */
static void
add_relation(GpudlLearnSetup *ls, const char *name, int arity, const GdlType *types,
			 GdlColumns rows, const GdlRelInfo *info)
{
	GdlIlpRelation *r;
	int			c;

	ls->rels = repalloc(ls->rels, sizeof(GdlIlpRelation) * (ls->nrels + 1));
	r = &ls->rels[ls->nrels++];
	memset(r, 0, sizeof(*r));
	r->name = pstrdup(name);
	r->arity = arity;
	for (c = 0; c < arity; c++)
		r->types[c] = types[c];
	r->rows = rows;
	if (info != NULL && info->relid != 0)
		gpudl_schema_tags(info, arity, r->tags);
}

/* Say why a predicate is not background for the learner. */
static void
left_out(const char *name, int arity)
{
	ereport(NOTICE,
			(errmsg("gpudl_learn leaves out predicate \"%s\": it has %d arguments, the learner "
					"reads 1 to %d", name, arity, GDL_ILP_MAX_ARITY)));
}

/*
 * The background of a program: every unary and binary predicate its rules
 * read or derive, and every bound table; the target's own rows (when the
 * program derives it) as its known facts.
 */
static void
build_background(GpudlLearnSetup *ls)
{
	GdlAnalysis *a = ls->analysis;
	ListCell   *lc;
	int			i;
	int			bad;

	ls->rels = palloc0(sizeof(GdlIlpRelation));
	for (i = 0; i < a->npreds; i++)
	{
		GdlPred    *p = &a->preds[i];
		GdlColumns	rows;

		if (p->arity < 1 || p->arity > GDL_ILP_MAX_ARITY)
		{
			if (strcmp(p->name, ls->target) != 0)
				left_out(p->name, p->arity);
			continue;
		}
		if ((bad = gpudl_unreadable_column(p)) >= 0)
		{
			gpudl_report_unreadable(NOTICE, p, bad, "gpudl_learn");
			continue;
		}
		gpudl_predicate_rows(ls->analysis, &ls->plan, ls->dict, p, &rows);
		add_relation(ls, p->name, p->arity, p->types, rows, p->is_edb ? &p->rel : NULL);
		CHECK_FOR_INTERRUPTS();
	}
	/* bound tables no rule reads yet */
	foreach(lc, ls->def->bindings)
	{
		GpudlBinding *b = lfirst(lc);
		GdlPred		p;
		GdlColumns	rows;

		if (!gpudl_unread_binding(ls->def, a, b, &p))
			continue;
		if (p.arity < 1 || p.arity > GDL_ILP_MAX_ARITY)
		{
			left_out(p.name, p.arity);
			continue;
		}
		if ((bad = gpudl_unreadable_column(&p)) >= 0)
		{
			gpudl_report_unreadable(NOTICE, &p, bad, "gpudl_learn");
			continue;
		}
		gpudl_load_edb(NULL, &p, ls->dict, &rows);
		add_relation(ls, p.name, p.arity, p.types, rows, &p.rel);
	}
}

/* Examples must fit the target: arity 1 or 2, the target's types. */
static void
check_examples(GpudlLearnSetup *ls, const char *what, GdlColumns *ex, GdlType *types)
{
	int			c;

	if (ex->ncols < 1 || ex->ncols > GDL_ILP_MAX_ARITY)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the %s have %d column%s, but a target has 1 to %d arguments", what,
						ex->ncols, ex->ncols == 1 ? "" : "s", GDL_ILP_MAX_ARITY),
				 errhint("Select one column per argument of \"%s\", in order.", ls->target)));
	if (ls->arity == 0)
	{
		ls->arity = ex->ncols;
		for (c = 0; c < ex->ncols; c++)
			ls->types[c] = types[c];
	}
	if (ex->ncols != ls->arity)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the %s have %d column%s, but \"%s\" has %d argument%s",
						what, ex->ncols, ex->ncols == 1 ? "" : "s", ls->target, ls->arity,
						ls->arity == 1 ? "" : "s")));
	for (c = 0; c < ex->ncols; c++)
	{
		GdlType		want = ls->types[c];
		GdlType		got = types[c];
		bool		ok = want == got ||
			((want == GDL_TYPE_INT || want == GDL_TYPE_BIGINT) &&
			 (got == GDL_TYPE_INT || got == GDL_TYPE_BIGINT));

		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the %s is %s, but argument %d of \"%s\" is %s",
							c + 1, what, gdl_type_name(got), c + 1, ls->target,
							gdl_type_name(want))));
	}
}

/*
 * Everything a learning call needs: the program (analysed), one dictionary,
 * the background, the target's arity and types, and the examples (either may
 * be NULL: positives for gpudl_candidates, negatives when drawn by PCA).
 */
GpudlLearnSetup *
gpudl_learn_setup(const char *program, const char *target, int arity,
				  const char *positives, const char *negatives)
{
	GpudlLearnSetup *ls = palloc0(sizeof(GpudlLearnSetup));
	int			t;

	gpudl_install_host();
	check_target_name(target);
	ls->target = pstrdup(target);
	ls->def = gpudl_load_program(program);
	ls->analysis = gpudl_analyze_program(ls->def);
	ls->dict = gdl_dict_create();
	ls->arity = arity;
	t = gdl_analysis_find_pred(ls->analysis, target);
	if (t >= 0)
	{
		GdlPred    *p = &ls->analysis->preds[t];

		if (p->is_edb)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("target \"%s\" is a table of program \"%s\"; learn a derived predicate",
							target, program),
					 errhint("Name the predicate to learn differently from the tables its rules read.")));
		if (p->arity < 1 || p->arity > GDL_ILP_MAX_ARITY)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("target \"%s\" has %d arguments; rules can be learned for 1 to %d",
							target, p->arity, GDL_ILP_MAX_ARITY)));
		if (arity > 0 && arity != p->arity)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("arity %d does not match predicate \"%s\", which has %d arguments",
							arity, target, p->arity)));
		ls->arity = p->arity;
		for (int c = 0; c < p->arity; c++)
			ls->types[c] = p->types[c];
	}
	else if (arity != 0 && (arity < 1 || arity > GDL_ILP_MAX_ARITY))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arity must be between 1 and %d, not %d", GDL_ILP_MAX_ARITY, arity)));
	build_background(ls);

	if (positives != NULL)
	{
		GdlType    *types;

		ls->positives = gpudl_read_examples(positives, "positives", ls->dict, &types);
		check_examples(ls, "positives", ls->positives, types);
		gpudl_example_tags(positives, ls->arity, ls->tags);
		if (ls->positives->nrows == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the positives are empty"),
					 errhint("Give at least one example of \"%s\".", target)));
	}
	if (negatives != NULL)
	{
		GdlType    *types;

		ls->negatives = gpudl_read_examples(negatives, "negatives", ls->dict, &types);
		check_examples(ls, "negatives", ls->negatives, types);
	}

	memset(&ls->prob, 0, sizeof(ls->prob));
	ls->prob.nrels = ls->nrels;
	ls->prob.rels = ls->rels;
	ls->prob.target = ls->target;
	ls->prob.arity = ls->arity;
	for (int c = 0; c < ls->arity; c++)
	{
		ls->prob.types[c] = ls->types[c];
		ls->prob.example_types[c] = ls->types[c];
		ls->prob.tags[c] = ls->tags[c];
	}
	ls->prob.positives = ls->positives;
	ls->prob.negatives = ls->negatives;
	return ls;
}

/*
 * The ILP core's fixpoint hook: run the stored program plus the learned
 * clauses with the Datalog engine over the same tables and dictionary, and
 * mark which target facts it derives.
 */
static void
eval_with_engine_run(void *arg, const char *program, const char *target, int arity,
					 const GdlColumns *facts, bool *derived);

/* The learn's deadline (gdl_now_ms), checked by the engine's progress calls of a fixpoint check. */
static double check_deadline_ms = 0;

/* Progress of a fixpoint check: past the learn's max_seconds it is cancelled. */
static void
check_progress(void *arg, const struct GdlProgress *p)
{
	gpudl_progress_engine(arg, p);
	if (check_deadline_ms > 0 && gdl_now_ms() > check_deadline_ms)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("gpudl_learn: max_seconds ran out during a fixpoint check")));
}

/*
 * The ILP core's fixpoint hook.  With a time budget the check runs in a
 * subtransaction, and one that runs past max_seconds is cancelled and
 * counts as deriving nothing (the selection then makes no further check);
 * any other error propagates.
 */
static void
eval_with_engine(void *arg, const char *program, const char *target, int arity,
				 const GdlColumns *facts, bool *derived)
{
	GpudlLearnSetup *ls = arg;
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	if (ls->deadline_ms <= 0)
	{
		eval_with_engine_run(arg, program, target, arity, facts, derived);
		return;
	}
	check_deadline_ms = ls->deadline_ms;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		eval_with_engine_run(arg, program, target, arity, facts, derived);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		check_deadline_ms = 0;
		if (ed->sqlerrcode != ERRCODE_QUERY_CANCELED || gdl_now_ms() <= ls->deadline_ms)
			ReThrowError(ed);
		memset(derived, 0, sizeof(bool) * facts->nrows);
	}
	PG_END_TRY();
	check_deadline_ms = 0;
}

/* Run one fixpoint check with the engine (see eval_with_engine). */
static void
eval_with_engine_run(void *arg, const char *program, const char *target, int arity,
				 const GdlColumns *facts, bool *derived)
{
	GpudlLearnSetup *ls = arg;
	GpudlProgramDef def = *ls->def;
	StringInfoData src;
	GdlAnalysis *a;
	GdlPlan    *plan;
	GdlResult  *r;
	HTAB	   *seen;
	HASHCTL		hc;
	size_t		i;
	int			t;

	initStringInfo(&src);
	if (gdl_analysis_find_pred(ls->analysis, target) < 0)
	{
		appendStringInfo(&src, ".decl %s(a1: %s", gdl_pred_name_quote(target), gdl_type_name(ls->types[0]));
		for (int c = 1; c < arity; c++)
			appendStringInfo(&src, ", a%d: %s", c + 1, gdl_type_name(ls->types[c]));
		appendStringInfoString(&src, ")\n");
	}
	appendStringInfoString(&src, program);
	def.prog = gdl_alloc(sizeof(GdlProgram));
	gdl_program_append(def.prog, ls->def->prog);
	gdl_program_append(def.prog, gpudl_parse_text(src.data, "learned program"));
	a = gpudl_analyze_program(&def);
	plan = gdl_plan_compile(a);
	t = gdl_analysis_find_pred(a, target);

	r = gpudl_run_cpu_goal(plan, ls->dict, t, check_progress);

	memset(&hc, 0, sizeof(hc));
	hc.keysize = sizeof(int64_t) * 2;
	hc.entrysize = sizeof(int64_t) * 2;
	hc.hcxt = CurrentMemoryContext;
	seen = hash_create("gpudl derived facts", Max(r->rows.nrows, 16), &hc,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (i = 0; i < r->rows.nrows; i++)
	{
		int64_t		key[2] = {r->rows.cols[0][i], arity > 1 ? r->rows.cols[1][i] : 0};

		(void) hash_search(seen, key, HASH_ENTER, NULL);
	}
	for (i = 0; i < facts->nrows; i++)
	{
		int64_t		key[2] = {facts->cols[0][i], arity > 1 ? facts->cols[1][i] : 0};

		derived[i] = hash_search(seen, key, HASH_FIND, NULL) != NULL;
	}
	hash_destroy(seen);
}

/* The hook that judges learned programs with the engine. */
GdlIlpEvalHook
gpudl_learn_eval_hook(GpudlLearnSetup *ls)
{
	GdlIlpEvalHook h;

	h.fn = eval_with_engine;
	h.arg = ls;
	return h;
}
