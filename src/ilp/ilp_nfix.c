/*
 * ilp_nfix.c — the least fixpoint of a candidate program of the refinement
 * search, computed by the engine itself (issue 22: recursion through the
 * target).
 *
 * The program's rules are printed as Datalog over internal names — r<i> for
 * background relation i, k for the facts to start from, t for the target —
 * so any relation name is safe, and every column is declared bigint: the
 * world's values are already the caller's 64-bit encoding and the rules only
 * compare them for equality.  The engine (src/exec, on the CPU backend) then
 * runs its own stratified semi-naive evaluation, and the target's rows come
 * back as a relation of the world (sorted, distinct, indexed per argument).
 *
 * Incremental as rules are added: the caller passes the fixpoint of the
 * program without the new rule as 'start' (a subset of the new fixpoint,
 * by monotonicity), so a run derives only what the new rule adds and what
 * follows from it.
 */
#include "ilp_refine.h"

#include "../lang/gdl_lang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most bytes one fixpoint of a candidate program may hold (4 GiB). */
#define NX_FIX_MEMORY ((int64_t) 4 << 30)

/* Column names of the internal relations (for the engine's messages only). */
static const char *const column_names[NX_MAX_ARITY] = {"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"};

/* What the engine's callbacks read: the world and the start facts. */
typedef struct FixCtx
{
	const NxWorld *w;
	const NxRel *start;
	GdlType		types[NX_MAX_ARITY];
	char	   *colnames[NX_MAX_ARITY];
	char	   *typnames[NX_MAX_ARITY];
} FixCtx;

/* The relation behind an internal name ("k" or "r<i>"), or NULL. */
static const NxRel *
fix_rel(const FixCtx *c, const char *name)
{
	if (strcmp(name, "k") == 0)
		return c->start;
	if (name[0] == 'r' && name[1] >= '0' && name[1] <= '9')
	{
		int			i = atoi(name + 1);

		if (i >= 0 && i < c->w->nrels && i != c->w->target_rel)
			return &c->w->rels[i];
	}
	return NULL;
}

/* Resolver of the analysis: every internal relation, all columns bigint. */
static bool
fix_resolve(void *arg, const char *name, GdlRelInfo *out)
{
	FixCtx	   *c = arg;
	const NxRel *r = fix_rel(c, name);

	if (r == NULL)
		return false;
	out->relid = (uint32_t) (r == c->start ? 1 : 2 + (r - c->w->rels));
	out->display_name = (char *) r->name;
	out->ncols = r->arity;
	out->types = c->types;
	out->colnames = c->colnames;
	out->typnames = c->typnames;
	return true;
}

/* The engine's loader: a copy of the relation's columns (the engine frees them). */
static void
fix_load(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	FixCtx	   *c = arg;
	const NxRel *r = fix_rel(c, pred->name);

	(void) dict;
	if (r == NULL)
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "no relation \"%s\" in the learner's world",
				  pred->name);
	out->ncols = r->arity;
	out->nrows = (size_t) r->n;
	out->cols = gdl_alloc(sizeof(int64_t *) * r->arity);
	for (int k = 0; k < r->arity; k++)
	{
		out->cols[k] = gdl_alloc(sizeof(int64_t) * (r->n + 1));
		if (r->n > 0)
			memcpy(out->cols[k], r->col[k], sizeof(int64_t) * r->n);
	}
}

/* Append "name(V.., V..)" for an atom over variables args[0..arity-1]. */
static void
put_atom(GdlBuf *b, const char *name, int arity, const int8_t *args)
{
	gdl_buf_append(b, "%s(", name);
	for (int k = 0; k < arity; k++)
		gdl_buf_append(b, "%sV%d", k ? ", " : "", args[k]);
	gdl_buf_putc(b, ')');
}

/* The program as Datalog over the internal names. */
static char *
fix_source(const NxWorld *w, const NxRule *rules, int nrules)
{
	GdlBuf		b;
	int8_t		head[NX_MAX_ARITY];

	gdl_buf_init(&b);
	for (int k = 0; k < w->arity; k++)
		head[k] = (int8_t) k;
	put_atom(&b, "t", w->arity, head);
	gdl_buf_append(&b, " :- ");
	put_atom(&b, "k", w->arity, head);
	gdl_buf_append(&b, ".\n");
	for (int i = 0; i < nrules; i++)
	{
		const NxRule *r = &rules[i];

		put_atom(&b, "t", w->arity, head);
		gdl_buf_append(&b, " :- ");
		for (int j = 0; j < r->natoms; j++)
		{
			const NxAtom *a = &r->atoms[j];
			char		name[16];

			if (a->pred == w->target_rel)
				strcpy(name, "t");
			else
				snprintf(name, sizeof(name), "r%d", a->pred);
			if (j > 0)
				gdl_buf_append(&b, ", ");
			put_atom(&b, name, w->rels[a->pred].arity, a->args);
		}
		gdl_buf_append(&b, ".\n");
	}
	return b.data;
}

/* Does the rule read the target in its body? */
bool
nx_rule_recursive(const NxWorld *w, const NxRule *r)
{
	for (int i = 0; i < r->natoms; i++)
		if (r->atoms[i].pred == w->target_rel && w->target_rel >= 0)
			return true;
	return false;
}

/*
 * The least fixpoint of the target under the rules, starting from the
 * facts 'start' (they are kept), into *out (a relation of the target's
 * arity; its old tuples are freed).  Background relations are the world's;
 * the target's tuples in the world are not read.
 */
void
nx_fixpoint(const NxWorld *w, const NxRule *rules, int nrules, const NxRel *start, NxRel *out)
{
	FixCtx		c;
	char	   *src;
	GdlProgram *prog;
	GdlAnalysis *a;
	GdlPlan    *plan;
	GdlRunInput in;
	GdlGoal		goal;
	GdlDict    *dict;
	GdlResult  *res;

	memset(&c, 0, sizeof(c));
	c.w = w;
	c.start = start;
	for (int k = 0; k < NX_MAX_ARITY; k++)
	{
		c.types[k] = GDL_TYPE_BIGINT;
		c.colnames[k] = (char *) column_names[k];
		c.typnames[k] = "bigint";
	}
	src = fix_source(w, rules, nrules);
	prog = gdl_parse(src);
	a = gdl_analyze(prog, fix_resolve, &c);
	plan = gdl_plan_compile(a);
	memset(&in, 0, sizeof(in));
	in.load_edb = fix_load;
	in.load_arg = &c;
	in.device = GDL_DEVICE_CPU;
	in.want_rows = true;
	/* a bound on a candidate's fixpoint: past it the engine stops the learn with its memory error */
	in.memory_limit = NX_FIX_MEMORY;
	memset(&goal, 0, sizeof(goal));
	goal.pred = gdl_analysis_find_pred(a, "t");
	dict = gdl_dict_create();
	res = gdl_run(plan, &in, dict, &goal);
	if (out->arity == 0)
		out->arity = w->arity;
	nx_rel_set(out, &res->rows);
	for (int k = 0; k < res->rows.ncols; k++)
		gdl_free(res->rows.cols[k]);
	gdl_free(res->rows.cols);
	gdl_free(src);
}
