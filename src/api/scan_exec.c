/*
 * scan_exec.c — the executor side of the GpuDatalog custom scan.
 *
 * The first fetch after the scan starts (or after a rescan whose parameters
 * changed) evaluates the program and goal arguments and the pushed-down
 * values (constants, parameters of a prepared statement, outer values of a
 * LATERAL join), checks the column definition list, reads the tables into
 * the engine and runs the cached (goal-directed) plan; the answer stays in
 * the engine's columns and rows are decoded one at a time as they are
 * fetched, so a LIMIT stops the decoding early.  A rescan with unchanged
 * parameters streams the same answer again; the scan also runs backwards
 * (SCROLL cursors) without a Materialize node.
 *
 * Memory: the run (pinned plans, dictionary, answer columns) lives in a
 * context of the node, reset for the next run; a decoded row lives in a
 * context reset at the next fetch.
 */
#include "api/scan.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

static void gpudl_scan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *gpudl_scan_exec(CustomScanState *node);
static void gpudl_scan_end(CustomScanState *node);
static void gpudl_scan_rescan(CustomScanState *node);
static void explain_prepare(GpudlScanState *st, CustomScan *cs);
static char *gpudl_scan_text_arg(GpudlScanState *st, ExprState *e, const char *what);

static const CustomExecMethods gpudl_exec_methods = {
	.CustomName = GPUDL_SCAN_NAME,
	.BeginCustomScan = gpudl_scan_begin,
	.ExecCustomScan = gpudl_scan_exec,
	.EndCustomScan = gpudl_scan_end,
	.ReScanCustomScan = gpudl_scan_rescan,
	.ExplainCustomScan = gpudl_scan_explain,
};

/* CreateCustomScanState: the node, before ExecInitCustomScan fills it. */
Node *
gpudl_scan_create_state(CustomScan *cscan)
{
	GpudlScanState *st = palloc0(sizeof(GpudlScanState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &gpudl_exec_methods;
	return (Node *) st;
}

/* Collect the ids of PARAM_EXEC parameters in an expression tree. */
static bool
exec_params_walker(Node *node, Bitmapset **ids)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
	{
		*ids = bms_add_member(*ids, ((Param *) node)->paramid);
		return false;
	}
	return expression_tree_walker(node, exec_params_walker, (void *) ids);
}

/* The value side of a pushed condition "col = value" (as planned). */
static Expr *
pushed_value(Expr *cond, int side)
{
	return (Expr *) list_nth(((OpExpr *) cond)->args, 1 - side);
}

/*
 * BeginCustomScan: expression states, contexts; under EXPLAIN (without
 * ANALYZE) also prepare the run, to show what it would do.
 */
static void
gpudl_scan_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpudlScanState *st = (GpudlScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cs->custom_private;
	List	   *args = (List *) list_nth(priv, GPUDL_PRIV_ARGS);
	List	   *sides = (List *) list_nth(priv, GPUDL_PRIV_SIDES);
	int			i;

	st->kind = intVal(list_nth(priv, GPUDL_PRIV_KIND));
	st->count_only = (intVal(list_nth(priv, GPUDL_PRIV_FLAGS)) & GPUDL_SCAN_COUNT_ONLY) != 0;
	st->program_expr = ExecInitExpr(linitial(cs->custom_exprs), &node->ss.ps);
	st->goal_expr = ExecInitExpr(lsecond(cs->custom_exprs), &node->ss.ps);
	st->npushed = list_length(args);
	st->pushed_args = palloc0(sizeof(int) * (st->npushed + 1));
	st->pushed_exprs = palloc0(sizeof(ExprState *) * (st->npushed + 1));
	st->pushed_types = palloc0(sizeof(Oid) * (st->npushed + 1));
	for (i = 0; i < st->npushed; i++)
	{
		Expr	   *v = pushed_value(list_nth(cs->custom_exprs, 2 + i), list_nth_int(sides, i));

		st->pushed_args[i] = list_nth_int(args, i);
		st->pushed_exprs[i] = ExecInitExpr(v, &node->ss.ps);
		st->pushed_types[i] = exprType((Node *) v);
	}
	(void) exec_params_walker((Node *) cs->custom_exprs, &st->exec_params);
	st->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "gpudl scan run",
										ALLOCSET_DEFAULT_SIZES);
	st->row_cxt = AllocSetContextCreate(estate->es_query_cxt, "gpudl scan row",
										ALLOCSET_SMALL_SIZES);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		explain_prepare(st, cs);
}

/*
 * EXPLAIN without ANALYZE: when program and goal are known before the scan
 * runs (constants, extern parameters), prepare the run — plans acquired,
 * goal bound — to show what it would do.  Pushed values that depend on an
 * outer row stay unknown; they still bind their goal arguments.
 */
static void
explain_prepare(GpudlScanState *st, CustomScan *cs)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	Bitmapset  *params = NULL;
	MemoryContext old;
	char	   *program;
	char	   *goal;
	GpudlRunOptions opts;
	GdlTerm   **values;
	int			i;

	(void) exec_params_walker((Node *) list_make2(linitial(cs->custom_exprs),
												  lsecond(cs->custom_exprs)), &params);
	if (!bms_is_empty(params))
		return;
	program = gpudl_scan_text_arg(st, st->program_expr, "program name");
	goal = gpudl_scan_text_arg(st, st->goal_expr, "goal");
	values = palloc0(sizeof(GdlTerm *) * (st->npushed + 1));
	st->pushed_unknown = palloc0(sizeof(bool) * (st->npushed + 1));
	for (i = 0; i < st->npushed; i++)
	{
		Bitmapset  *vp = NULL;
		bool		isnull;
		Datum		d;

		(void) exec_params_walker((Node *) st->pushed_exprs[i]->expr, &vp);
		if (!bms_is_empty(vp))
		{
			st->pushed_unknown[i] = true;
			continue;
		}
		d = ExecEvalExprSwitchContext(st->pushed_exprs[i], econtext, &isnull);
		if (!isnull)
			values[i] = gpudl_datum_to_term(d, st->pushed_types[i]);
		else
			st->pushed_unknown[i] = true;
	}
	ResetExprContext(econtext);
	memset(&opts, 0, sizeof(opts));
	opts.want_rows = st->kind == GPUDL_SCAN_QUERY && !st->count_only;
	opts.goal_directed = true;
	opts.npushed = st->npushed;
	opts.pushed_args = st->pushed_args;
	opts.pushed_values = values;
	old = MemoryContextSwitchTo(st->run_cxt);
	st->explain_run = gpudl_run_prepare(program, goal, &opts);
	MemoryContextSwitchTo(old);
}

/*
 * Evaluate a text argument (program or goal); NULL is an error, as for the
 * functions.  The string is copied into the current memory context.
 */
static char *
gpudl_scan_text_arg(GpudlScanState *st, ExprState *e, const char *what)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MemoryContext cxt = CurrentMemoryContext;
	bool		isnull;
	Datum		d = ExecEvalExprSwitchContext(e, econtext, &isnull);
	char	   *s;

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	s = MemoryContextStrdup(cxt, TextDatumGetCString(d));
	ResetExprContext(econtext);
	return s;
}

/*
 * Run the program for the current argument values: a fresh run context,
 * the plan prepared (pushed values bound), the columns checked, the engine
 * run.
 */
static void
start_run(GpudlScanState *st)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleDesc	desc = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	MemoryContext old;
	GpudlRunOptions opts;
	GdlTerm   **values;
	bool		null_value = false;
	char	   *program;
	char	   *goal;
	GpudlRun   *run;
	int			i;
	int			token;

	MemoryContextReset(st->run_cxt);
	st->run = NULL;
	gpudl_memory_reset();
	old = MemoryContextSwitchTo(st->run_cxt);
	program = gpudl_scan_text_arg(st, st->program_expr, "program name");
	goal = gpudl_scan_text_arg(st, st->goal_expr, "goal");
	values = palloc0(sizeof(GdlTerm *) * (st->npushed + 1));
	for (i = 0; i < st->npushed; i++)
	{
		bool		isnull;
		Datum		d = ExecEvalExprSwitchContext(st->pushed_exprs[i], econtext, &isnull);

		/* "col = NULL" holds for no row */
		if (isnull)
			null_value = true;
		else
			values[i] = gpudl_datum_to_term(d, st->pushed_types[i]);
		if (!isnull && values[i] == NULL)
			elog(ERROR, "gpudl: pushed-down value of unexpected type %s",
				 format_type_be(st->pushed_types[i]));
	}
	ResetExprContext(econtext);
	memset(&opts, 0, sizeof(opts));
	opts.want_rows = st->kind == GPUDL_SCAN_QUERY && !st->count_only;
	opts.goal_directed = true;
	opts.npushed = null_value ? 0 : st->npushed;
	opts.pushed_args = st->pushed_args;
	opts.pushed_values = values;
	run = gpudl_run_prepare(program, goal, &opts);
	if (null_value)
		run->empty = true;
	if (st->kind == GPUDL_SCAN_QUERY)
		gpudl_check_result_desc(desc, run, goal);
	token = gpudl_progress_begin(st->kind == GPUDL_SCAN_COUNT ? "count" : "query", program, goal);
	gpudl_run_execute(run);
	gpudl_progress_end(token);
	MemoryContextSwitchTo(old);

	st->run = run;
	st->nrows = st->kind == GPUDL_SCAN_COUNT ? 1 : (size_t) run->result->count;
	st->pos = 0;
	st->eof = false;
	gpudl_scan_note_run(st, run);
}

/* Put row r of the answer into the scan slot. */
static void
store_row(GpudlScanState *st, size_t r, TupleTableSlot *slot)
{
	GpudlRun   *run = st->run;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	MemoryContext old;
	int			c;

	MemoryContextReset(st->row_cxt);
	old = MemoryContextSwitchTo(st->row_cxt);
	if (st->kind == GPUDL_SCAN_COUNT)
	{
		slot->tts_values[0] = Int64GetDatum(run->result->count);
		slot->tts_isnull[0] = false;
	}
	else if (st->count_only)
	{
		/* nothing above reads a column */
		for (c = 0; c < desc->natts; c++)
		{
			slot->tts_values[c] = (Datum) 0;
			slot->tts_isnull[c] = true;
		}
	}
	else
		for (c = 0; c < desc->natts; c++)
		{
			slot->tts_values[c] = gpudl_value_to_datum(run->result->rows.cols[c][r],
													   run->result->types[c],
													   TupleDescAttr(desc, c)->atttypid,
													   run->dict);
			slot->tts_isnull[c] = false;
		}
	MemoryContextSwitchTo(old);
	ExecStoreVirtualTuple(slot);
}

/*
 * The access method: the next row in the scan direction (forward, or
 * backward like a tuplestore: the row before the last one returned).
 */
static TupleTableSlot *
gpudl_scan_next(ScanState *ss)
{
	GpudlScanState *st = (GpudlScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	bool		forward = ScanDirectionIsForward(ss->ps.state->es_direction);

	if (st->run == NULL)
		start_run(st);
	ExecClearTuple(slot);
	if (forward)
	{
		if (st->eof || st->pos >= st->nrows)
		{
			st->eof = true;
			return slot;
		}
		store_row(st, st->pos++, slot);
		return slot;
	}
	if (st->eof)
	{
		st->pos = st->nrows;
		st->eof = false;
	}
	else
	{
		if (st->pos == 0)
			return slot;
		st->pos--;
	}
	if (st->pos == 0)
		return slot;
	store_row(st, st->pos - 1, slot);
	return slot;
}

/* Recheck for EvalPlanQual: the rows are computed, nothing to recheck. */
static bool
gpudl_scan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan: rows through ExecScan (filter and projection). */
static TupleTableSlot *
gpudl_scan_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, gpudl_scan_next, gpudl_scan_recheck);
}

/* EndCustomScan: release the run (unpins the plans). */
static void
gpudl_scan_end(CustomScanState *node)
{
	GpudlScanState *st = (GpudlScanState *) node;

	MemoryContextDelete(st->run_cxt);
	MemoryContextDelete(st->row_cxt);
	st->run = NULL;
	st->explain_run = NULL;
}

/*
 * ReScanCustomScan: run again when a parameter the arguments depend on
 * changed, else stream the same answer from the start.
 */
static void
gpudl_scan_rescan(CustomScanState *node)
{
	GpudlScanState *st = (GpudlScanState *) node;

	if (node->ss.ps.chgParam != NULL && bms_overlap(node->ss.ps.chgParam, st->exec_params))
	{
		MemoryContextReset(st->run_cxt);
		st->run = NULL;
	}
	st->pos = 0;
	st->eof = false;
	ExecScanReScan(&node->ss);
}
