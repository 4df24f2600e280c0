/*
 * scan_explain.c — what EXPLAIN shows of the GpuDatalog scan:
 *
 *   Custom Scan (GpuDatalog)
 *     Program: fam (version 3)
 *     Goal: anc(X, Y)
 *     Pushed Down: (t.a = 'abe'::text)
 *     Bound Goal: anc("abe", Y)
 *     Evaluation: magic sets, binding pattern bf (1 adorned predicate, 0 demand rules)
 *     Strata: 1
 *     Plan Cache: hit
 *     Device: cpu
 *
 * and under ANALYZE the runs' iterations, tuples derived per stratum,
 * engine time and bytes moved between host and device.  Without ANALYZE the
 * run is only prepared (plans acquired, nothing read).  The lines that
 * depend on the machine (device, times, bytes) are left out when
 * gpudl.explain_machine_details is off, so that regression output is the
 * same everywhere.  VERBOSE adds the rewritten program.
 */
#include "api/scan.h"
#include "pg/pg_part.h"

#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/ruleutils.h"

/* The device a run would use now (EXPLAIN without ANALYZE). */
static const char *
device_now(void)
{
	if (gpudl_device_setting == GPUDL_DEVICE_CPU)
		return "cpu";
	return gpudl_choose_gpu_backend() ? "gpu" : "cpu";
}

/* How a prepared run evaluates: "magic sets, ..." or "whole program". */
static char *
evaluation_text(const GpudlRun *run)
{
	const GdlMagic *m;

	if (run->empty)
		return pstrdup("none (a pushed-down value admits no answer)");
	if (run->magic == NULL)
		return run->magic_why ? psprintf("whole program (%s)", run->magic_why)
			: pstrdup("whole program");
	m = run->magic->magic;
	return psprintf("magic sets, binding pattern %s (%d adorned predicate%s, %d demand rule%s%s)",
					m->pattern, m->nadorned, m->nadorned == 1 ? "" : "s",
					m->nmagic_rules, m->nmagic_rules == 1 ? "" : "s",
					m->nfrozen > 0 ? psprintf(", %d predicate%s kept whole", m->nfrozen,
											  m->nfrozen == 1 ? "" : "s") : "");
}

/*
 * Record a finished run of the scan for EXPLAIN ANALYZE: totals over all
 * runs (rescans), and what the last one was.
 */
void
gpudl_scan_note_run(GpudlScanState *st, GpudlRun *run)
{
	GpudlScanTotals *t = &st->totals;
	MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(st));
	const GdlRunStats *s = &run->result->stats;
	bool		hit = run->cache_hit && (run->magic == NULL || run->magic_cache_hit);
	int			goal;
	const GdlAnalysis *a = gpudl_run_analysis(run, &goal);
	int			i;

	t->runs++;
	if (hit)
		t->cache_hits++;
	else
		t->cache_misses++;
	t->program = pstrdup(run->program);
	t->version = run->version;
	t->bound_goal = gpudl_goal_to_string(run->goal, gdl_plan_analysis(run->plan));
	t->evaluation = evaluation_text(run);
	t->device = pstrdup(run->device);
	t->empty = run->empty;
	if (run->empty)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	t->iterations += s->iterations;
	t->tuples += s->tuples_derived;
	t->ms_total += s->ms_total;
	t->bytes_to_device += s->bytes_to_device;
	t->bytes_from_device += s->bytes_from_device;
	t->launches += s->launches;
	t->library_calls += s->library_calls;
	t->nparts = s->nparts;		/* issue 14: the last run's partitions */
	t->parts = s->nparts > 0 ? memcpy(palloc(sizeof(GdlPartStats) * s->nparts), s->parts,
									  sizeof(GdlPartStats) * s->nparts) : NULL;
	if (t->nstrata != a->nstrata)
	{
		t->nstrata = a->nstrata;
		t->stratum_tuples = palloc0(sizeof(int64) * (a->nstrata + 1));
		t->stratum_needed = palloc0(sizeof(bool) * (a->nstrata + 1));
	}
	t->nneeded = gpudl_run_strata(run, t->stratum_needed);
	for (i = 0; i < a->nstrata && i < s->nstrata; i++)
		t->stratum_tuples[i] += s->stratum_tuples[i];
	MemoryContextSwitchTo(old);
}

/* Text of an argument expression: its value when constant, else SQL. */
static char *
arg_text(Node *expr, List *context, bool useprefix)
{
	if (IsA(expr, Const) && !((Const *) expr)->constisnull &&
		(((Const *) expr)->consttype == TEXTOID || ((Const *) expr)->consttype == VARCHAROID))
		return TextDatumGetCString(((Const *) expr)->constvalue);
	return deparse_expression(expr, context, useprefix, false);
}

/*
 * The goal with its pushed-down values (EXPLAIN without ANALYZE): known
 * values as constants, values still to come from an outer row as their SQL.
 */
static char *
explain_bound_goal(GpudlScanState *st, CustomScan *cs, List *context, bool useprefix)
{
	const GpudlRun *run = st->explain_run;
	const GpudlGoalSpec *g = run->goal;
	StringInfoData s;
	int			i,
				k;

	initStringInfo(&s);
	appendStringInfo(&s, "%s(", gdl_pred_name_quote(gdl_plan_analysis(run->plan)->preds[g->pred].name));
	for (i = 0; i < g->arity; i++)
	{
		const GdlTerm *t = g->args[i];
		char	   *text = NULL;

		for (k = 0; k < st->npushed && text == NULL; k++)
		{
			const GdlTerm *pt = g->args[st->pushed_args[k]];

			if (st->pushed_unknown[k] &&
				(st->pushed_args[k] == i ||
				 (t->kind == GDL_TERM_VAR && pt->kind == GDL_TERM_VAR && pt->var == t->var)))
			{
				OpExpr	   *op = list_nth(cs->custom_exprs, 2 + k);
				List	   *sides = list_nth(cs->custom_private, GPUDL_PRIV_SIDES);

				text = deparse_expression(list_nth(op->args, 1 - list_nth_int(sides, k)),
										  context, useprefix, false);
			}
		}
		appendStringInfo(&s, "%s%s", i ? ", " : "",
						 text ? text : gdl_term_to_string(g->clause, t));
	}
	appendStringInfoChar(&s, ')');
	return s.data;
}

/* The rewritten program, one clause per line (EXPLAIN VERBOSE). */
static List *
rewritten_rules(const GpudlRun *run)
{
	const GdlProgram *prog = run->magic->magic->prog;
	List	   *lines = NIL;
	int			i;

	for (i = 0; i < prog->nitems; i++)
		if (prog->items[i].kind == GDL_ITEM_CLAUSE)
			lines = lappend(lines, gdl_clause_to_string(prog->items[i].clause));
	return lines;
}

/* ExplainCustomScan: the scan's properties (see the file comment). */
void
gpudl_scan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpudlScanState *st = (GpudlScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	GpudlScanTotals *t = &st->totals;
	GpudlRun   *run = st->explain_run;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	List	   *context;
	List	   *pushed;
	bool		details = gpudl_explain_machine_details;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	if (run)
		ExplainPropertyText("Program", psprintf("%s (version %lld)", run->program,
												(long long) run->version), es);
	else if (t->runs > 0)
		ExplainPropertyText("Program", psprintf("%s (version %lld)", t->program,
												(long long) t->version), es);
	else
		ExplainPropertyText("Program", arg_text(linitial(cs->custom_exprs), context, useprefix), es);
	ExplainPropertyText("Goal", arg_text(lsecond(cs->custom_exprs), context, useprefix), es);
	if (st->kind == GPUDL_SCAN_COUNT)
		ExplainPropertyText("Answer", "count", es);
	else if (st->count_only)
		ExplainPropertyText("Answer", "count only (no column is read)", es);

	pushed = list_copy_tail(cs->custom_exprs, 2);
	if (pushed != NIL)
		ExplainPropertyText("Pushed Down",
							deparse_expression((Node *) make_ands_explicit(pushed), context,
											   useprefix, false), es);

	if (run)
	{
		bool	   *needed;
		int			goal;
		const GdlAnalysis *a = gpudl_run_analysis(run, &goal);

		if (pushed != NIL)
			ExplainPropertyText("Bound Goal", explain_bound_goal(st, cs, context, useprefix), es);
		ExplainPropertyText("Evaluation", evaluation_text(run), es);
		needed = palloc0(sizeof(bool) * (a->nstrata + 1));
		ExplainPropertyInteger("Strata", NULL, gpudl_run_strata(run, needed), es);
		ExplainPropertyText("Plan Cache",
							run->cache_hit && (run->magic == NULL || run->magic_cache_hit) ?
							"hit" : "miss", es);
		if (details)
			ExplainPropertyText("Device", device_now(), es);
		if (es->verbose && run->magic)
		{
			List	   *rules = rewritten_rules(run);
			ListCell   *lc;

			/* one line per rule in text; a list in the structured formats */
			if (es->format == EXPLAIN_FORMAT_TEXT)
				foreach(lc, rules)
					ExplainPropertyText("Rule", lfirst(lc), es);
			else
				ExplainPropertyList("Rewritten Rules", rules, es);
		}
		return;
	}
	if (t->runs == 0)
		return;

	/* EXPLAIN ANALYZE: what the runs did */
	if (pushed != NIL)
		ExplainPropertyText("Bound Goal", t->bound_goal, es);
	ExplainPropertyText("Evaluation", t->evaluation, es);
	if (!t->empty)
		ExplainPropertyInteger("Strata", NULL, t->nneeded, es);
	if (t->runs == 1)
		ExplainPropertyText("Plan Cache", t->cache_hits ? "hit" : "miss", es);
	else
		ExplainPropertyText("Plan Cache", psprintf("%lld hits, %lld misses",
												   (long long) t->cache_hits,
												   (long long) t->cache_misses), es);
	if (details)
		ExplainPropertyText("Device", t->device, es);
	if (t->runs > 1)
		ExplainPropertyInteger("Runs", NULL, t->runs, es);
	ExplainPropertyInteger("Iterations", NULL, t->iterations, es);
	{
		StringInfoData s;
		int			i;
		bool		first = true;

		initStringInfo(&s);
		appendStringInfo(&s, "%lld", (long long) t->tuples);
		for (i = 0; i < t->nstrata; i++)
			if (t->stratum_needed[i])
			{
				appendStringInfo(&s, "%sstratum %d: %lld", first ? " (" : ", ", i,
								 (long long) t->stratum_tuples[i]);
				first = false;
			}
		if (!first)
			appendStringInfoChar(&s, ')');
		ExplainPropertyText("Tuples Derived", s.data, es);
	}
	gpudl_part_explain(t->nparts, t->parts, details, es);
	if (details)
	{
		ExplainPropertyFloat("Engine Time", "ms", t->ms_total, 3, es);
		ExplainPropertyText("Bytes Moved",
							psprintf("%lld to device, %lld from device",
									 (long long) t->bytes_to_device,
									 (long long) t->bytes_from_device), es);
		if (t->launches > 0 || t->library_calls > 0)
			ExplainPropertyText("Device Launches",
								psprintf("%lld kernels, %lld library calls",
										 (long long) t->launches,
										 (long long) t->library_calls), es);
	}
}
