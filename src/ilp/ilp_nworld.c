/*
 * ilp_nworld.c — the world of the refinement search (ilp_refine.h): type
 * classes from SQL types and tags, background relations of any arity
 * indexed per argument, and the examples (negatives drawn when none are
 * given).
 *
 * A type class is a pair (value class of the SQL type, tag).  Columns of
 * different SQL classes never share a variable; tags (a domain, a foreign
 * key, a user's 'types') narrow that further, a NULL tag matching any tag
 * of its SQL class.  A relation the search cannot use is left out with a
 * note saying why (the host shows the notes), never silently.
 */
#include "ilp_refine.h"

#include <stdlib.h>
#include <string.h>

/* Class id of (sql class, tag), added when new. */
static int
class_of(NxWorld *w, int **sqlcls, const char ***tags, int *cap, int sc, const char *tag)
{
	for (int i = 0; i < w->nclass; i++)
		if ((*sqlcls)[i] == sc &&
			(((*tags)[i] == NULL && tag == NULL) ||
			 ((*tags)[i] != NULL && tag != NULL && strcmp((*tags)[i], tag) == 0)))
			return i;
	if (w->nclass == *cap)
	{
		*cap = *cap * 2 + 8;
		*sqlcls = gdl_realloc(*sqlcls, sizeof(int) * *cap);
		*tags = gdl_realloc(*tags, sizeof(char *) * *cap);
	}
	(*sqlcls)[w->nclass] = sc;
	(*tags)[w->nclass] = tag;
	return w->nclass++;
}

/* May variables of classes a and b be one variable? */
bool
nx_compat(const NxWorld *w, int a, int b)
{
	return w->compat[a * w->nclass + b];
}

/* Add a note about a relation the search leaves out. */
static void
note(NxWorld *w, char *msg)
{
	w->notes = gdl_realloc(w->notes, sizeof(char *) * (w->nnotes + 1));
	w->notes[w->nnotes++] = msg;
}

/* The relation (and argument) the qsort comparators below order by. */
static const NxRel *sort_rel;
static int	sort_arg;

/*
 * Order tuples a and b by arguments [from, to) of sort_rel, then by tuple
 * id (stable, deterministic).
 */
static int
cmp_tuple_args(int32_t a, int32_t b, int from, int to)
{
	for (int k = from; k < to; k++)
		ILP_CMP_RET(sort_rel->col[k][a], sort_rel->col[k][b]);
	return (a > b) - (a < b);
}

/* Tuple comparison over all arguments (for sorting and dedup). */
static int
cmp_tuple(const void *x, const void *y)
{
	return cmp_tuple_args(*(const int32_t *) x, *(const int32_t *) y, 0, sort_rel->arity);
}

/* Order by one argument, then by tuple id (stable, deterministic). */
static int
cmp_arg(const void *x, const void *y)
{
	return cmp_tuple_args(*(const int32_t *) x, *(const int32_t *) y, sort_arg, sort_arg + 1);
}

/* Copy a relation's rows as distinct tuples and index each argument. */
static void
rel_build(NxRel *r, const GdlColumns *rows)
{
	int64_t		n = (int64_t) rows->nrows;
	int32_t    *ord = gdl_alloc(sizeof(int32_t) * (n + 1));
	int64_t		m = 0;
	NxRel		tmp = *r;

	for (int k = 0; k < r->arity; k++)
		tmp.col[k] = rows->cols[k];
	for (int64_t i = 0; i < n; i++)
		ord[i] = (int32_t) i;
	sort_rel = &tmp;
	qsort(ord, n, sizeof(int32_t), cmp_tuple);
	for (int k = 0; k < r->arity; k++)
		r->col[k] = gdl_alloc(sizeof(int64_t) * (n + 1));
	for (int64_t i = 0; i < n; i++)
	{
		bool		dup = i > 0;

		for (int k = 0; k < r->arity && dup; k++)
			dup = rows->cols[k][ord[i]] == rows->cols[k][ord[i - 1]];
		if (dup)
			continue;
		for (int k = 0; k < r->arity; k++)
			r->col[k][m] = rows->cols[k][ord[i]];
		m++;
	}
	r->n = m;
	sort_rel = r;
	for (int k = 0; k < r->arity; k++)
	{
		r->perm[k] = gdl_alloc(sizeof(int32_t) * (m + 1));
		r->sval[k] = gdl_alloc(sizeof(int64_t) * (m + 1));
		for (int64_t i = 0; i < m; i++)
			r->perm[k][i] = (int32_t) i;
		sort_arg = k;
		qsort(r->perm[k], m, sizeof(int32_t), cmp_arg);
		for (int64_t i = 0; i < m; i++)
			r->sval[k][i] = r->col[k][r->perm[k][i]];
	}
	gdl_free(ord);
}

/* Free a relation's tuples and indexes (it becomes empty). */
void
nx_rel_clear(NxRel *r)
{
	for (int k = 0; k < r->arity; k++)
	{
		gdl_free(r->col[k]);
		gdl_free(r->perm[k]);
		gdl_free(r->sval[k]);
		r->col[k] = NULL;
		r->perm[k] = NULL;
		r->sval[k] = NULL;
	}
	r->n = 0;
}

/* Replace a relation's tuples by the distinct rows given (arity kept). */
void
nx_rel_set(NxRel *r, const GdlColumns *rows)
{
	nx_rel_clear(r);
	rel_build(r, rows);
}

/* Is the tuple in the relation?  (Tuples are sorted over all arguments.) */
bool
nx_rel_has(const NxRel *r, const int64_t *tuple)
{
	int64_t		lo = 0,
				hi = r->n;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi) / 2;
		int			c = 0;

		for (int k = 0; k < r->arity && c == 0; k++)
			if (r->col[k][mid] != tuple[k])
				c = r->col[k][mid] < tuple[k] ? -1 : 1;
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * What the search may assume of the target in a body: the given facts
 * (the program's fixpoint), with the positive examples when with_positives
 * (FOIL's oracle: while a program is still incomplete, a recursive rule is
 * judged by what it would derive from the facts the finished program
 * should derive; every rule it accepts is checked at the real fixpoint).
 */
void
nx_world_set_target(NxWorld *w, const NxRel *facts, bool with_positives)
{
	GdlColumns	c;
	int64_t		n = facts->n + (with_positives ? w->npos : 0);

	if (w->target_rel < 0)
		return;
	c.ncols = w->arity;
	c.nrows = (size_t) n;
	c.cols = gdl_alloc(sizeof(int64_t *) * w->arity);
	for (int k = 0; k < w->arity; k++)
	{
		c.cols[k] = gdl_alloc(sizeof(int64_t) * (n + 1));
		if (facts->n > 0)
			memcpy(c.cols[k], facts->col[k], sizeof(int64_t) * facts->n);
		if (with_positives)
			memcpy(c.cols[k] + facts->n, w->ex[k], sizeof(int64_t) * w->npos);
	}
	nx_rel_set(&w->rels[w->target_rel], &c);
	for (int k = 0; k < w->arity; k++)
		gdl_free(c.cols[k]);
	gdl_free(c.cols);
}

/* qsort: relations by name. */
static int
cmp_rel_name(const void *x, const void *y)
{
	return strcmp(((const NxRel *) x)->name, ((const NxRel *) y)->name);
}

/* Hash of an example tuple. */
static uint64_t
tuple_hash(int arity, int64_t *const *cols, int64_t i, int k, int64_t repl)
{
	uint64_t	h = 0x51ed270b27a1f3c5ULL;

	for (int c = 0; c < arity; c++)
		h = ilp_mix64(h ^ (uint64_t) (c == k ? repl : cols[c][i]));
	return h;
}

/*
 * Negatives when none are given: each positive with one argument replaced
 * by a value of that argument's class (from the positives and the
 * background), seeded, that is not a positive; per_pos per positive.
 */
static void
draw_negatives(NxWorld *w, const GdlIlpProblem *prob, int64_t seed, int per_pos,
			   int64_t **neg, int64_t *nneg)
{
	const GdlColumns *P = prob->positives;
	IlpKeySet	seen;
	int64_t    *dom[NX_MAX_ARITY];
	int64_t		ndom[NX_MAX_ARITY];
	int64_t		cap = (int64_t) P->nrows * per_pos + 1;

	ilp_keyset_init(&seen, (int64_t) P->nrows * (per_pos + 1) + 16);
	for (size_t i = 0; i < P->nrows; i++)
		(void) ilp_keyset_add(&seen, tuple_hash(w->arity, P->cols, i, -1, 0));
	for (int k = 0; k < w->arity; k++)
	{
		int64_t		n = 0,
					m = 0;

		n = (int64_t) P->nrows;
		for (int r = 0; r < w->nrels; r++)
			for (int c = 0; c < w->rels[r].arity; c++)
				if (nx_compat(w, w->rels[r].cls[c], w->cls[k]))
					n += w->rels[r].n;
		dom[k] = gdl_alloc(sizeof(int64_t) * (n + 1));
		for (size_t i = 0; i < P->nrows; i++)
			dom[k][m++] = P->cols[k][i];
		for (int r = 0; r < w->nrels; r++)
			for (int c = 0; c < w->rels[r].arity; c++)
				if (nx_compat(w, w->rels[r].cls[c], w->cls[k]))
					for (int64_t t = 0; t < w->rels[r].n; t++)
						dom[k][m++] = w->rels[r].col[c][t];
		qsort(dom[k], m, sizeof(int64_t), ilp_cmp_i64);
		n = 0;
		for (int64_t i = 0; i < m; i++)
			if (i == 0 || dom[k][i] != dom[k][i - 1])
				dom[k][n++] = dom[k][i];
		ndom[k] = n;
	}
	for (int k = 0; k < w->arity; k++)
		neg[k] = gdl_alloc(sizeof(int64_t) * cap);
	*nneg = 0;
	for (size_t i = 0; i < P->nrows; i++)
		for (int j = 0; j < per_pos; j++)
		{
			for (int tries = 0; tries < 8; tries++)
			{
				uint64_t	h = ilp_mix64((uint64_t) seed ^ ilp_mix64(i * 1315423911ULL + j * 64 + tries));
				int			k = (int) (h % (uint64_t) w->arity);
				int64_t		v;

				if (ndom[k] == 0)
					continue;
				v = dom[k][(h >> 8) % (uint64_t) ndom[k]];
				if (!ilp_keyset_add(&seen, tuple_hash(w->arity, P->cols, i, k, v)))
					continue;
				for (int c = 0; c < w->arity; c++)
					neg[c][*nneg] = c == k ? v : P->cols[c][i];
				(*nneg)++;
				break;
			}
		}
	for (int k = 0; k < w->arity; k++)
		gdl_free(dom[k]);
	ilp_keyset_free(&seen);
}

/*
 * Build the world of a problem: classes, usable relations (others noted),
 * invented helpers when asked (ilp_ninvent.c), examples.  Raises
 * GDL_ERR_DATATYPE when examples do not fit the target.
 */
NxWorld *
nx_world_build(const GdlIlpProblem *prob, int64_t seed, int neg_per_pos, bool recursive,
			   bool helpers)
{
	NxWorld    *w = gdl_alloc(sizeof(NxWorld));
	int		   *sqlcls = NULL;
	const char **tags = NULL;
	int			cap = 0;
	const GdlColumns *P = prob->positives;
	const GdlColumns *N = prob->negatives;
	int64_t    *gneg[NX_MAX_ARITY] = {0};
	int64_t		ngen = 0;

	if (prob->arity < 1 || prob->arity > NX_MAX_ARITY)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "a target has 1 to %d arguments, not %d",
				  NX_MAX_ARITY, prob->arity);
	w->target = prob->target;
	w->arity = prob->arity;
	for (int k = 0; k < w->arity; k++)
	{
		GdlType		t = prob->types[k] != GDL_TYPE_UNKNOWN ? prob->types[k] : prob->example_types[k];

		if (t == GDL_TYPE_UNKNOWN)
			t = GDL_TYPE_BIGINT;
		w->cls[k] = class_of(w, &sqlcls, &tags, &cap, ilp_type_class(t), prob->tags[k]);
	}
	w->rels = gdl_alloc(sizeof(NxRel) * (prob->nrels + 1));
	for (int r = 0; r < prob->nrels; r++)
	{
		const GdlIlpRelation *rel = &prob->rels[r];
		NxRel	   *x;

		if (prob->target && strcmp(rel->name, prob->target) == 0 && recursive &&
			rel->arity == prob->arity && rel->rows.ncols == rel->arity)
		{
			/* known facts of the target: where every fixpoint starts */
			w->known.name = gdl_strdup(rel->name);
			w->known.arity = rel->arity;
			rel_build(&w->known, &rel->rows);
			continue;
		}
		if (prob->target && strcmp(rel->name, prob->target) == 0)
		{
			note(w, gdl_sprintf("predicate \"%s\": it is the target, whose known facts the "
								"refinement search does not read", rel->name));
			continue;
		}
		if (rel->arity < 1 || rel->arity > NX_MAX_ARITY)
		{
			note(w, gdl_sprintf("predicate \"%s\": it has %d arguments, the learner reads 1 "
								"to %d", rel->name, rel->arity, NX_MAX_ARITY));
			continue;
		}
		if (rel->rows.nrows == 0)
		{
			note(w, gdl_sprintf("predicate \"%s\": it has no rows", rel->name));
			continue;
		}
		if (rel->rows.ncols != rel->arity)
			gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
					  "background relation \"%s\" has %d columns, expected %d",
					  rel->name, rel->rows.ncols, rel->arity);
		x = &w->rels[w->nrels++];
		x->name = gdl_strdup(rel->name);
		x->arity = rel->arity;
		for (int k = 0; k < rel->arity; k++)
			x->cls[k] = class_of(w, &sqlcls, &tags, &cap, ilp_type_class(rel->types[k]),
								 rel->tags[k]);
		rel_build(x, &rel->rows);
		gdl_check_interrupts();
	}
	if (w->nrels > 1)
		qsort(w->rels, w->nrels, sizeof(NxRel), cmp_rel_name);
	if (helpers)
	{
		/* invented helpers after the data's relations, before the target */
		nx_world_add_helpers(w);
		w->rels = gdl_realloc(w->rels, sizeof(NxRel) * (w->nrels + 1));
	}
	w->target_rel = -1;
	if (w->known.name == NULL)
	{
		w->known.name = gdl_strdup(prob->target ? prob->target : "");
		w->known.arity = w->arity;
	}
	if (recursive)
	{
		/* the target in bodies: last, so the background's numbers stay */
		NxRel	   *t = &w->rels[w->nrels];

		memset(t, 0, sizeof(*t));
		t->name = gdl_strdup(prob->target);
		t->arity = w->arity;
		memcpy(t->cls, w->cls, sizeof(t->cls));
		w->target_rel = w->nrels++;
	}
	w->compat = gdl_alloc(sizeof(bool) * (w->nclass * w->nclass + 1));
	w->class_name = gdl_alloc(sizeof(char *) * (w->nclass + 1));
	for (int a = 0; a < w->nclass; a++)
	{
		w->class_name[a] = tags[a] ? gdl_strdup(tags[a]) : gdl_sprintf("class %d", sqlcls[a]);
		for (int b = 0; b < w->nclass; b++)
			w->compat[a * w->nclass + b] = sqlcls[a] == sqlcls[b] &&
				(tags[a] == NULL || tags[b] == NULL || strcmp(tags[a], tags[b]) == 0);
	}
	gdl_free(sqlcls);
	gdl_free(tags);

	if (P == NULL || P->nrows == 0)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "no positive examples of \"%s\"", prob->target);
	if (P->ncols != w->arity || (N != NULL && N->ncols != w->arity))
		gdl_error(GDL_ERR_DATATYPE, NULL, NULL, "the examples of \"%s\" have %d columns, the "
				  "target %d arguments", prob->target,
				  P->ncols != w->arity ? P->ncols : N->ncols, w->arity);
	if (N == NULL)
	{
		draw_negatives(w, prob, seed, neg_per_pos, gneg, &ngen);
		w->generated_neg = true;
	}
	w->npos = (int32_t) P->nrows;
	w->nneg = (int32_t) (N ? (int64_t) N->nrows : ngen);
	for (int k = 0; k < w->arity; k++)
	{
		w->ex[k] = gdl_alloc(sizeof(int64_t) * (w->npos + w->nneg + 1));
		memcpy(w->ex[k], P->cols[k], sizeof(int64_t) * w->npos);
		if (N)
			memcpy(w->ex[k] + w->npos, N->cols[k], sizeof(int64_t) * w->nneg);
		else
		{
			memcpy(w->ex[k] + w->npos, gneg[k], sizeof(int64_t) * w->nneg);
			gdl_free(gneg[k]);
		}
	}
	nx_world_set_target(w, &w->known, true);
	return w;
}
