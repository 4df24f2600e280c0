/*
 * ilp_data.c — data loading and the fixpoint hook for the standalone ILP
 * runners.  Text values are interned in one GdlDict shared by every world of
 * a run; a column whose values all parse as integers is bigint.
 *
 * The hook hands a learned program to the Datalog engine (gdl_parse,
 * gdl_analyze, gdl_plan_compile, gdl_run) when the runner is built with
 * GDL_ILP_ENGINE, so recursive rules are judged by what the real engine
 * derives; otherwise it uses gdl_ilp_eval_program.
 */
#include "ilp_data.h"
#include "../unit/test_host.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds on a monotonic clock (the test host's clock). */
double
ilp_data_now(void)
{
	return gdl_test_now_s();
}

/* Does the string parse entirely as a decimal integer? */
static bool
is_int(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Read a TSV file into columns of encoded values; false if unreadable or empty. */
bool
ilp_data_read_tsv(const char *path, GdlDict *dict, GdlColumns *out, GdlType *types)
{
	FILE	   *f = fopen(path, "r");
	char		line[4096];
	char	 ***cells = NULL;
	size_t		n = 0,
				cap = 0;
	int			ncols = -1;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f))
	{
		size_t		len = strlen(line);
		char	  **row;
		int			k = 0;
		char	   *p = line;

		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		row = gdl_alloc(sizeof(char *) * 8);
		for (;;)
		{
			char	   *tab = strchr(p, '\t');

			if (k == 8)
				break;
			row[k++] = gdl_strndup(p, tab ? (size_t) (tab - p) : strlen(p));
			if (!tab)
				break;
			p = tab + 1;
		}
		if (ncols < 0)
			ncols = k;
		if (k != ncols)
		{
			fprintf(stderr, "%s: ragged row\n", path);
			fclose(f);
			return false;
		}
		if (n == cap)
		{
			cap = cap * 2 + 64;
			cells = gdl_realloc(cells, sizeof(char **) * cap);
		}
		cells[n++] = row;
	}
	fclose(f);
	if (ncols <= 0)
		return false;
	out->ncols = ncols;
	out->nrows = n;
	out->cols = gdl_alloc(sizeof(int64_t *) * ncols);
	for (int c = 0; c < ncols; c++)
	{
		bool		ints = true;

		for (size_t i = 0; i < n && ints; i++)
			ints = is_int(cells[i][c]);
		types[c] = ints ? GDL_TYPE_BIGINT : GDL_TYPE_TEXT;
		out->cols[c] = gdl_alloc(sizeof(int64_t) * (n + 1));
		for (size_t i = 0; i < n; i++)
			out->cols[c][i] = ints ? strtoll(cells[i][c], NULL, 10) :
				gdl_dict_intern(dict, cells[i][c], strlen(cells[i][c]));
	}
	return true;
}

/* Append a relation (name copied). */
void
ilp_data_add_rel(IlpData *d, const char *name, int arity, const GdlType *types,
				 const GdlColumns *rows)
{
	GdlIlpRelation *r;

	if (d->nrels == ILP_DATA_MAX_RELS)
	{
		fprintf(stderr, "too many relations\n");
		exit(2);
	}
	r = &d->rels[d->nrels++];
	r->name = gdl_strdup(name);
	r->arity = arity;
	r->types[0] = types[0];
	r->types[1] = arity > 1 ? types[1] : GDL_TYPE_UNKNOWN;
	r->rows = *rows;
}

/* qsort comparator for file names. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Load every *.tsv of a directory: pos.tsv / neg.tsv as examples, the rest as background. */
bool
ilp_data_load_dir(const char *dir, GdlDict *dict, IlpData *d)
{
	DIR		   *dh = opendir(dir);
	struct dirent *de;
	char	   *names[ILP_DATA_MAX_RELS + 2];
	int			nn = 0;

	if (dh == NULL)
		return false;
	memset(d, 0, sizeof(*d));
	while ((de = readdir(dh)) != NULL)
	{
		size_t		len = strlen(de->d_name);

		if (len > 4 && strcmp(de->d_name + len - 4, ".tsv") == 0 && nn < ILP_DATA_MAX_RELS + 2)
			names[nn++] = gdl_strdup(de->d_name);
	}
	closedir(dh);
	qsort(names, nn, sizeof(char *), cmp_str);
	for (int i = 0; i < nn; i++)
	{
		char	   *path = gdl_sprintf("%s/%s", dir, names[i]);
		char	   *base = gdl_strndup(names[i], strlen(names[i]) - 4);
		GdlColumns	cols;
		GdlType		types[8];

		if (!ilp_data_read_tsv(path, dict, &cols, types))
			continue;
		if (strcmp(base, "pos") == 0 || strcmp(base, "neg") == 0)
		{
			if (strcmp(base, "pos") == 0)
			{
				d->pos = cols;
				d->arity = cols.ncols;
				d->ex_types[0] = types[0];
				d->ex_types[1] = cols.ncols > 1 ? types[1] : GDL_TYPE_UNKNOWN;
			}
			else
				d->neg = cols;
			continue;
		}
		ilp_data_add_rel(d, base, cols.ncols, types, &cols);
	}
	return true;
}

#ifdef GDL_ILP_ENGINE

/* Resolve an extensional predicate of a learned program to a world relation. */
static bool
hook_resolve(void *arg, const char *name, GdlRelInfo *out)
{
	const IlpDataHookArg *h = arg;

	for (int i = 0; i < h->data->nrels; i++)
	{
		const GdlIlpRelation *r = &h->data->rels[i];

		if (strcmp(r->name, name) != 0)
			continue;
		memset(out, 0, sizeof(*out));
		out->relid = (uint32_t) i + 1;
		out->display_name = gdl_strdup(name);
		out->ncols = r->arity;
		out->types = gdl_alloc(sizeof(GdlType) * r->arity);
		out->colnames = gdl_alloc(sizeof(char *) * r->arity);
		out->typnames = gdl_alloc(sizeof(char *) * r->arity);
		for (int c = 0; c < r->arity; c++)
		{
			out->types[c] = r->types[c];
			out->colnames[c] = gdl_sprintf("c%d", c + 1);
			out->typnames[c] = gdl_strdup(r->types[c] == GDL_TYPE_TEXT ? "text" : "bigint");
		}
		return true;
	}
	return false;
}

/* Hand a relation's rows to the engine (copies; the engine frees them). */
static void
hook_load(void *arg, const GdlPred *pred, GdlDict *dict, GdlColumns *out)
{
	const IlpDataHookArg *h = arg;
	const GdlIlpRelation *r = &h->data->rels[pred->rel.relid - 1];

	out->ncols = r->arity;
	out->nrows = r->rows.nrows;
	out->cols = gdl_alloc(sizeof(int64_t *) * r->arity);
	for (int c = 0; c < r->arity; c++)
	{
		out->cols[c] = gdl_alloc(sizeof(int64_t) * (r->rows.nrows + 1));
		memcpy(out->cols[c], r->rows.cols[c], sizeof(int64_t) * r->rows.nrows);
	}
}

/* Run a learned program with the engine and return every derived target row. */
GdlResult *
ilp_data_derive(IlpDataHookArg *h, const char *program, const char *target, int arity)
{
	/* declare the target: a trial program may hold only recursive rules */
	const char *tn0 = h->types[0] == GDL_TYPE_TEXT ? "text" : "bigint";
	const char *tn1 = h->types[1] == GDL_TYPE_TEXT ? "text" : "bigint";
	char	   *src = arity == 2 ?
		gdl_sprintf(".decl %s(a: %s, b: %s)\n%s", target, tn0, tn1, program) :
		gdl_sprintf(".decl %s(a: %s)\n%s", target, tn0, program);
	GdlProgram *prog = gdl_parse(src);
	GdlAnalysis *a = gdl_analyze(prog, hook_resolve, h);
	GdlPlan    *plan = gdl_plan_compile(a);
	GdlRunInput in = {
		.load_edb = hook_load, .load_arg = h, .device = GDL_DEVICE_CPU,
		.max_iterations = 100000, .want_rows = true
	};
	GdlGoal		goal;

	memset(&goal, 0, sizeof(goal));
	goal.pred = gdl_analysis_find_pred(a, target);
	return gdl_run(plan, &in, h->dict, &goal);
}

/* Pack a row of one or two values into a 64-bit-ish hash key pair. */
static uint64_t
row_key(const GdlColumns *c, size_t i)
{
	uint64_t	k = (uint64_t) c->cols[0][i] * 0x9e3779b97f4a7c15ULL;

	if (c->ncols > 1)
		k ^= (uint64_t) c->cols[1][i] + 0x632be59bd9b4e019ULL + (k << 6) + (k >> 2);
	return k;
}

/* Evaluate with the engine, then look the facts up in the derived rows. */
static void
engine_eval(IlpDataHookArg *h, const char *program, const char *target, int arity,
			const GdlColumns *facts, bool *derived)
{
	GdlResult  *res = ilp_data_derive(h, program, target, arity);
	size_t		cap = 16;
	size_t	   *slots;

	while (cap < res->rows.nrows * 2 + 2)
		cap <<= 1;
	slots = gdl_alloc(sizeof(size_t) * cap);	/* row + 1, 0 empty */
	for (size_t k = 0; k < res->rows.nrows; k++)
	{
		size_t		s = row_key(&res->rows, k) & (cap - 1);

		while (slots[s] != 0)
			s = (s + 1) & (cap - 1);
		slots[s] = k + 1;
	}
	for (size_t i = 0; i < facts->nrows; i++)
	{
		size_t		s = row_key(facts, i) & (cap - 1);

		derived[i] = false;
		for (; slots[s] != 0 && !derived[i]; s = (s + 1) & (cap - 1))
		{
			size_t		k = slots[s] - 1;

			derived[i] = res->rows.cols[0][k] == facts->cols[0][i] &&
				(arity == 1 || res->rows.cols[1][k] == facts->cols[1][i]);
		}
	}
	gdl_free(slots);
}

/* Is the engine built in? */
bool
ilp_data_engine_available(void)
{
	return true;
}
#else

/* Is the engine built in? */
bool
ilp_data_engine_available(void)
{
	return false;
}
#endif

/* The fixpoint hook: the engine when built in and asked for, else the ILP evaluator. */
void
ilp_data_hook(void *arg, const char *program, const char *target, int arity,
			  const GdlColumns *facts, bool *derived)
{
	IlpDataHookArg *h = arg;
	GdlIlpProblem prob;

	h->calls++;
#ifdef GDL_ILP_ENGINE
	if (h->use_engine)
	{
		engine_eval(h, program, target, arity, facts, derived);
		return;
	}
#endif
	memset(&prob, 0, sizeof(prob));
	prob.nrels = h->data->nrels;
	prob.rels = h->data->rels;
	prob.target = target;
	prob.arity = arity;
	prob.types[0] = h->types[0];
	prob.types[1] = h->types[1];
	gdl_ilp_eval_program(&prob, program, facts, derived);
}
