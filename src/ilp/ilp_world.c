/*
 * ilp_world.c — the data an ILP run works on: values mapped to dense ids per
 * value class, background relations indexed both ways, the examples (with
 * negatives drawn under the partial completeness assumption when none are
 * given), the target's known facts, and invented closure predicates.
 *
 * Dense ids are positions in the sorted distinct values of a class, so every
 * run over the same data numbers values the same way.
 */
#include "ilp_int.h"

#include <stdlib.h>
#include <string.h>

#define ILP_CLOSURE_CAP 4000000 /* tuples an invented closure may have */

/* The value class of a column type: values of one class may be joined. */
int
ilp_type_class(GdlType t)
{
	switch (t)
	{
		case GDL_TYPE_INT:
		case GDL_TYPE_BIGINT:
			return 0;
		case GDL_TYPE_TEXT:
			return 1;
		case GDL_TYPE_BOOL:
			return 2;
		case GDL_TYPE_FLOAT8:
			return 3;
		default:
			return 4;
	}
}

/* A type's name for messages (no dependency on the language module). */
static const char *
type_label(GdlType t)
{
	switch (t)
	{
		case GDL_TYPE_INT:
			return "int";
		case GDL_TYPE_BIGINT:
			return "bigint";
		case GDL_TYPE_TEXT:
			return "text";
		case GDL_TYPE_BOOL:
			return "bool";
		case GDL_TYPE_FLOAT8:
			return "float8";
		default:
			return "unknown";
	}
}

/* qsort comparator for int64 values. */
static int
cmp_i64(const void *x, const void *y)
{
	int64_t		a = *(const int64_t *) x;
	int64_t		b = *(const int64_t *) y;

	return (a > b) - (a < b);
}

/* qsort comparator for packed uint64 tuples. */
static int
cmp_u64(const void *x, const void *y)
{
	uint64_t	a = *(const uint64_t *) x;
	uint64_t	b = *(const uint64_t *) y;

	return (a > b) - (a < b);
}

/* Dense id of a value in a domain, or -1 when absent. */
int32_t
ilp_dom_id(const IlpDomain *d, int64_t v)
{
	int32_t		lo = 0;
	int32_t		hi = d->n - 1;

	while (lo <= hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;

		if (d->vals[mid] < v)
			lo = mid + 1;
		else if (d->vals[mid] > v)
			hi = mid - 1;
		else
			return mid;
	}
	return -1;
}

/*
 * Build an indexed relation from n tuples (b NULL for unary): sorted,
 * deduplicated, with forward and backward adjacency.
 */
IlpRel *
ilp_rel_build(int arity, const int32_t *ndom, int64_t n, const int32_t *a, const int32_t *b)
{
	IlpRel	   *r = gdl_alloc(sizeof(IlpRel));
	uint64_t   *keys = gdl_alloc(sizeof(uint64_t) * (n + 1));
	int64_t		m = 0;

	r->arity = arity;
	r->ndom[0] = ndom[0];
	r->ndom[1] = arity == 2 ? ndom[1] : 0;
	for (int64_t i = 0; i < n; i++)
		keys[i] = ilp_pair_key(a[i], arity == 2 ? b[i] : 0);
	if (n > 1)
		qsort(keys, n, sizeof(uint64_t), cmp_u64);
	for (int64_t i = 0; i < n; i++)
		if (m == 0 || keys[i] != keys[m - 1])
			keys[m++] = keys[i];
	r->n = m;
	r->a = gdl_alloc(sizeof(int32_t) * (m + 1));
	for (int64_t i = 0; i < m; i++)
		r->a[i] = (int32_t) (keys[i] >> 32);
	if (arity == 1)
	{
		r->bits = gdl_alloc(sizeof(uint64_t) * (r->ndom[0] / 64 + 1));
		for (int64_t i = 0; i < m; i++)
			ilp_setbit(r->bits, r->a[i]);
		gdl_free(keys);
		return r;
	}
	r->b = gdl_alloc(sizeof(int32_t) * (m + 1));
	r->fwd_off = gdl_alloc(sizeof(int64_t) * (r->ndom[0] + 1));
	r->bwd_off = gdl_alloc(sizeof(int64_t) * (r->ndom[1] + 1));
	r->bwd = gdl_alloc(sizeof(int32_t) * (m + 1));
	for (int64_t i = 0; i < m; i++)
	{
		r->b[i] = (int32_t) (keys[i] & 0xffffffffu);
		r->fwd_off[r->a[i] + 1]++;
		r->bwd_off[r->b[i] + 1]++;
	}
	for (int32_t v = 0; v < r->ndom[0]; v++)
		r->fwd_off[v + 1] += r->fwd_off[v];
	for (int32_t v = 0; v < r->ndom[1]; v++)
		r->bwd_off[v + 1] += r->bwd_off[v];
	{
		int64_t    *pos = gdl_alloc(sizeof(int64_t) * (r->ndom[1] + 1));

		memcpy(pos, r->bwd_off, sizeof(int64_t) * (r->ndom[1] + 1));
		for (int64_t i = 0; i < m; i++)
			r->bwd[pos[r->b[i]]++] = r->a[i];	/* a ascending within each b */
		gdl_free(pos);
	}
	gdl_free(keys);
	return r;
}

/* Release an indexed relation. */
void
ilp_rel_free(IlpRel *r)
{
	if (r == NULL)
		return;
	gdl_free(r->a);
	gdl_free(r->b);
	gdl_free(r->fwd_off);
	gdl_free(r->bwd_off);
	gdl_free(r->bwd);
	gdl_free(r->bits);
	gdl_free(r);
}

/* Is (a, b) — or (a) for unary — in the relation? */
bool
ilp_rel_has(const IlpRel *r, int32_t a, int32_t b)
{
	const int32_t *base;
	int64_t		lo,
				hi;
	int32_t		key;

	if (a < 0 || a >= r->ndom[0])
		return false;
	if (r->arity == 1)
		return ilp_bit(r->bits, a);
	if (b < 0 || b >= r->ndom[1])
		return false;
	/* search the shorter of the two adjacency lists */
	if (r->fwd_off[a + 1] - r->fwd_off[a] <= r->bwd_off[b + 1] - r->bwd_off[b])
	{
		base = r->b;
		lo = r->fwd_off[a];
		hi = r->fwd_off[a + 1] - 1;
		key = b;
	}
	else
	{
		base = r->bwd;
		lo = r->bwd_off[b];
		hi = r->bwd_off[b + 1] - 1;
		key = a;
	}
	while (lo <= hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (base[mid] < key)
			lo = mid + 1;
		else if (base[mid] > key)
			hi = mid - 1;
		else
			return true;
	}
	return false;
}

/*
 * Transitive closure of a binary relation whose columns share a domain:
 * a breadth-first search from every source.  NULL when it would exceed cap.
 */
IlpRel *
ilp_rel_closure(const IlpRel *r, int64_t cap)
{
	int32_t		nd = r->ndom[0];
	int32_t    *stamp = gdl_alloc(sizeof(int32_t) * (nd + 1));
	int32_t    *queue = gdl_alloc(sizeof(int32_t) * (nd + 1));
	int64_t		n = 0,
				alloc = r->n * 2 + 16;
	int32_t    *ca = gdl_alloc(sizeof(int32_t) * alloc);
	int32_t    *cb = gdl_alloc(sizeof(int32_t) * alloc);
	IlpRel	   *out;

	for (int32_t s = 0; s < nd; s++)
	{
		int32_t		qh = 0,
					qt = 0;

		if (r->fwd_off[s] == r->fwd_off[s + 1])
			continue;
		gdl_check_interrupts();
		queue[qt++] = s;
		while (qh < qt)
		{
			int32_t		u = queue[qh++];

			for (int64_t k = r->fwd_off[u]; k < r->fwd_off[u + 1]; k++)
			{
				int32_t		v = r->b[k];

				if (stamp[v] == s + 1)
					continue;
				stamp[v] = s + 1;
				queue[qt++] = v;
				if (n == alloc)
				{
					alloc *= 2;
					ca = gdl_realloc(ca, sizeof(int32_t) * alloc);
					cb = gdl_realloc(cb, sizeof(int32_t) * alloc);
				}
				ca[n] = s;
				cb[n] = v;
				if (++n > cap)
				{
					gdl_free(ca);
					gdl_free(cb);
					gdl_free(stamp);
					gdl_free(queue);
					return NULL;
				}
			}
		}
	}
	out = ilp_rel_build(2, r->ndom, n, ca, cb);
	gdl_free(ca);
	gdl_free(cb);
	gdl_free(stamp);
	gdl_free(queue);
	return out;
}

/* Growable list of int64 values, one per value class. */
typedef struct ValList
{
	int64_t		n;
	int64_t		cap;
	int64_t    *v;
} ValList;

/* Append all values of a column to a list. */
static void
vals_add(ValList *l, const int64_t *col, size_t n)
{
	if (l->n + (int64_t) n > l->cap)
	{
		l->cap = (l->n + n) * 2 + 64;
		l->v = gdl_realloc(l->v, sizeof(int64_t) * l->cap);
	}
	memcpy(l->v + l->n, col, sizeof(int64_t) * n);
	l->n += n;
}

/* Is a relation usable in the bias (unary or binary)? */
static bool
rel_usable(const GdlIlpRelation *r)
{
	return r->arity == 1 || r->arity == 2;
}

/* Check the shape of one input relation. */
static void
check_relation(const GdlIlpRelation *r, int i)
{
	if (r->name == NULL || r->name[0] == '\0')
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "background relation %d has no name", i + 1);
	if (rel_usable(r) && r->rows.ncols != r->arity)
		gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
				  "background relation \"%s\" has %d columns, expected %d",
				  r->name, r->rows.ncols, r->arity);
}

/* Settle the class of each target argument from declared, example or background types. */
static void
target_types(const GdlIlpProblem *prob, IlpWorld *w)
{
	for (int i = 0; i < prob->arity; i++)
	{
		GdlType		t = prob->types[i];
		GdlType		et = prob->example_types[i];

		if (t == GDL_TYPE_UNKNOWN)
			t = et;
		if (t == GDL_TYPE_UNKNOWN)
		{
			/* the one value class the background uses, if there is one */
			int			cls = -1;

			for (int r = 0; r < prob->nrels; r++)
			{
				if (!rel_usable(&prob->rels[r]))
					continue;
				for (int c = 0; c < prob->rels[r].arity; c++)
				{
					int			k = ilp_type_class(prob->rels[r].types[c]);

					if (cls < 0)
					{
						cls = k;
						t = prob->rels[r].types[c];
					}
					else if (cls != k)
						gdl_error(GDL_ERR_DATATYPE, NULL,
								  "Declare the target or give typed examples.",
								  "cannot infer the type of argument %d of \"%s\"",
								  i + 1, prob->target);
				}
			}
			if (cls < 0)
				t = GDL_TYPE_BIGINT;
		}
		if (et != GDL_TYPE_UNKNOWN && ilp_type_class(et) != ilp_type_class(t))
			gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
					  "examples of \"%s\" have type %s in column %d, expected %s",
					  prob->target, type_label(et), i + 1, type_label(t));
		w->types[i] = t;
		w->cls[i] = ilp_type_class(t);
	}
}

/* qsort comparator for predicates by name. */
static int
cmp_pred(const void *x, const void *y)
{
	return strcmp(((const IlpPred *) x)->name, ((const IlpPred *) y)->name);
}

/* Encode one column of values into dense ids. */
static int32_t *
encode_col(const IlpDomain *d, const int64_t *col, size_t n)
{
	int32_t    *out = gdl_alloc(sizeof(int32_t) * (n + 1));

	for (size_t i = 0; i < n; i++)
		out[i] = ilp_dom_id(d, col[i]);
	return out;
}

/* Build an indexed relation from a relation's encoded columns. */
static IlpRel *
rel_from_columns(const IlpWorld *w, const GdlColumns *rows, const int *cls, int arity)
{
	int32_t		nd[2];
	int32_t    *a,
			   *b = NULL;
	IlpRel	   *r;

	nd[0] = w->dom[cls[0]].n;
	nd[1] = arity == 2 ? w->dom[cls[1]].n : 0;
	a = encode_col(&w->dom[cls[0]], rows->cols[0], rows->nrows);
	if (arity == 2)
		b = encode_col(&w->dom[cls[1]], rows->cols[1], rows->nrows);
	r = ilp_rel_build(arity, nd, rows->nrows, a, b);
	gdl_free(a);
	gdl_free(b);
	return r;
}

/* A predicate name for an invented closure: base name made an identifier, "_plus", unique. */
static char *
closure_name(const IlpPred *preds, int npreds, const char *base)
{
	GdlBuf		b;
	size_t		stem;

	gdl_buf_init(&b);
	for (const char *s = base; *s; s++)
	{
		char		c = *s;

		if (c >= 'A' && c <= 'Z')
			c = c - 'A' + 'a';
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			c = '_';
		gdl_buf_putc(&b, c);
	}
	if (b.len == 0 || !(b.data[0] >= 'a' && b.data[0] <= 'z'))
	{
		char	   *t = gdl_sprintf("p%s", b.data);

		gdl_buf_init(&b);
		gdl_buf_append(&b, "%s", t);
	}
	gdl_buf_append(&b, "_plus");
	stem = b.len;
	for (int k = 1;; k++)
	{
		bool		clash = false;

		for (int i = 0; i < npreds && !clash; i++)
			clash = strcmp(preds[i].name, b.data) == 0;
		if (!clash)
			break;
		b.len = stem;
		b.data[stem] = '\0';
		gdl_buf_append(&b, "_%d", k);
	}
	return b.data;
}

/* Add the invented closures of every binary background predicate over one class. */
static int
add_closures(IlpWorld *w, int nbase)
{
	int			n = nbase;

	for (int i = 0; i < nbase; i++)
	{
		IlpPred    *p = &w->preds[i];
		IlpRel	   *c;

		if (p->kind != ILP_PRED_BG || p->arity != 2 || p->cls[0] != p->cls[1] || p->rel->n == 0)
			continue;
		c = ilp_rel_closure(p->rel, ILP_CLOSURE_CAP);
		if (c == NULL)
			continue;
		w->preds[n].name = closure_name(w->preds, n, p->name);
		w->preds[n].arity = 2;
		w->preds[n].cls[0] = w->preds[n].cls[1] = p->cls[0];
		w->preds[n].kind = ILP_PRED_CLOSURE;
		w->preds[n].base = i;
		w->preds[n].rel = c;
		n++;
	}
	return n;
}

/*
 * Build the world of a problem: validate it, map values to dense ids, index
 * the background, encode (and generate) examples, add invented closures.
 * negspec says how to generate negatives when the problem gives none (NULL:
 * partial completeness, 4 per positive, seed 0).
 */
IlpWorld *
ilp_world_build(const GdlIlpProblem *prob, bool need_examples, bool closures,
				const IlpNegSpec *negspec)
{
	IlpWorld   *w = gdl_alloc(sizeof(IlpWorld));
	ValList		vl[ILP_NCLASS];
	int			nbase = 0;
	int			known_rel = -1;
	IlpKeySet	known;
	int32_t    *pa,
			   *pb,
			   *qa = NULL,
			   *qb = NULL;
	int64_t		nq = 0;
	int32_t		np = 0;
	const GdlColumns *pos = prob->positives;
	const GdlColumns *neg = prob->negatives;

	if (prob->target == NULL || prob->target[0] == '\0')
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "the target predicate has no name");
	if (prob->arity != 1 && prob->arity != 2)
		gdl_error(GDL_ERR_PARAM, NULL, "Rule learning handles unary and binary targets.",
				  "target \"%s\" has arity %d, expected 1 or 2", prob->target, prob->arity);
	if (need_examples && (pos == NULL || pos->nrows == 0))
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "no positive examples of \"%s\"", prob->target);
	if (pos != NULL && pos->nrows > 0 && pos->ncols != prob->arity)
		gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
				  "positive examples of \"%s\" have %d columns, expected %d",
				  prob->target, pos->ncols, prob->arity);
	if (neg != NULL && neg->nrows > 0 && neg->ncols != prob->arity)
		gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
				  "negative examples of \"%s\" have %d columns, expected %d",
				  prob->target, neg->ncols, prob->arity);
	if (pos != NULL && pos->nrows > (size_t) INT32_MAX / 4)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "too many examples");
	w->target_name = prob->target;
	w->neg_weight = 1.0;
	w->arity = prob->arity;
	target_types(prob, w);

	/* value domains: every value of the background and the examples */
	memset(vl, 0, sizeof(vl));
	for (int r = 0; r < prob->nrels; r++)
	{
		const GdlIlpRelation *rel = &prob->rels[r];

		check_relation(rel, r);
		if (!rel_usable(rel))
			continue;
		if (strcmp(rel->name, prob->target) == 0)
		{
			if (rel->arity != prob->arity)
				gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
						  "relation \"%s\" has arity %d but the target has arity %d",
						  rel->name, rel->arity, prob->arity);
			if (known_rel >= 0)
				gdl_error(GDL_ERR_PARAM, NULL, NULL, "relation \"%s\" is given twice", rel->name);
			known_rel = r;
			for (int c = 0; c < rel->arity; c++)
				if (ilp_type_class(rel->types[c]) != w->cls[c])
					gdl_error(GDL_ERR_DATATYPE, NULL, NULL,
							  "relation \"%s\" has type %s in column %d, the target %s",
							  rel->name, type_label(rel->types[c]), c + 1,
							  type_label(w->types[c]));
		}
		else
		{
			for (int s = 0; s < r; s++)
				if (rel_usable(&prob->rels[s]) && strcmp(prob->rels[s].name, rel->name) == 0)
					gdl_error(GDL_ERR_PARAM, NULL, NULL, "relation \"%s\" is given twice",
							  rel->name);
			nbase++;
		}
		for (int c = 0; c < rel->arity; c++)
			vals_add(&vl[ilp_type_class(rel->types[c])], rel->rows.cols[c], rel->rows.nrows);
	}
	for (int c = 0; c < w->arity; c++)
	{
		if (pos != NULL && pos->nrows > 0)
			vals_add(&vl[w->cls[c]], pos->cols[c], pos->nrows);
		if (neg != NULL && neg->nrows > 0)
			vals_add(&vl[w->cls[c]], neg->cols[c], neg->nrows);
	}
	for (int k = 0; k < ILP_NCLASS; k++)
	{
		int64_t		m = 0;

		if (vl[k].n > 1)
			qsort(vl[k].v, vl[k].n, sizeof(int64_t), cmp_i64);
		for (int64_t i = 0; i < vl[k].n; i++)
			if (m == 0 || vl[k].v[i] != vl[k].v[m - 1])
				vl[k].v[m++] = vl[k].v[i];
		if (m > INT32_MAX - 2)
			gdl_error(GDL_ERR_LIMIT, NULL, NULL, "too many distinct values for rule learning");
		w->dom[k].n = (int32_t) m;
		w->dom[k].vals = vl[k].v;
	}

	/* predicates: background, the target, invented closures; sorted by name */
	w->preds = gdl_alloc(sizeof(IlpPred) * (2 * nbase + 2));
	w->npreds = 0;
	for (int r = 0; r < prob->nrels; r++)
	{
		const GdlIlpRelation *rel = &prob->rels[r];
		IlpPred    *p;

		if (!rel_usable(rel) || r == known_rel)
			continue;
		p = &w->preds[w->npreds++];
		p->name = gdl_strdup(rel->name);
		p->arity = rel->arity;
		for (int c = 0; c < rel->arity; c++)
			p->cls[c] = ilp_type_class(rel->types[c]);
		p->kind = ILP_PRED_BG;
		p->base = -1;
		p->rel = rel_from_columns(w, &rel->rows, p->cls, rel->arity);
		gdl_check_interrupts();
	}
	if (closures)
		w->npreds = add_closures(w, w->npreds);

	/* the known target facts */
	{
		int32_t		nd[2] = {w->dom[w->cls[0]].n, w->arity == 2 ? w->dom[w->cls[1]].n : 0};

		if (known_rel >= 0)
			w->known = rel_from_columns(w, &prob->rels[known_rel].rows, w->cls, w->arity);
		else
			w->known = ilp_rel_build(w->arity, nd, 0, NULL, NULL);
	}

	/* examples: positives deduplicated; negatives minus positives */
	ilp_keyset_init(&known, (pos ? (int64_t) pos->nrows : 0) + w->known->n + 16);
	for (int64_t i = 0; i < w->known->n; i++)
		ilp_keyset_add(&known, ilp_pair_key(w->known->a[i], w->arity == 2 ? w->known->b[i] : 0));
	pa = pb = NULL;
	if (pos != NULL && pos->nrows > 0)
	{
		int32_t    *ea = encode_col(&w->dom[w->cls[0]], pos->cols[0], pos->nrows);
		int32_t    *eb = w->arity == 2 ? encode_col(&w->dom[w->cls[1]], pos->cols[1], pos->nrows) : NULL;
		IlpKeySet	seen;

		ilp_keyset_init(&seen, pos->nrows);
		pa = gdl_alloc(sizeof(int32_t) * (pos->nrows + 1));
		pb = gdl_alloc(sizeof(int32_t) * (pos->nrows + 1));
		for (size_t i = 0; i < pos->nrows; i++)
		{
			uint64_t	k = ilp_pair_key(ea[i], eb ? eb[i] : 0);

			if (!ilp_keyset_add(&seen, k))
				continue;
			ilp_keyset_add(&known, k);
			pa[np] = ea[i];
			pb[np] = eb ? eb[i] : 0;
			np++;
		}
		ilp_keyset_free(&seen);
		gdl_free(ea);
		gdl_free(eb);
	}
	w->npos = np;
	w->ex[0] = pa;
	w->ex[1] = pb;
	if (neg != NULL && neg->nrows > 0)
	{
		int32_t    *ea = encode_col(&w->dom[w->cls[0]], neg->cols[0], neg->nrows);
		int32_t    *eb = w->arity == 2 ? encode_col(&w->dom[w->cls[1]], neg->cols[1], neg->nrows) : NULL;
		IlpKeySet	seen;

		ilp_keyset_init(&seen, neg->nrows);
		qa = gdl_alloc(sizeof(int32_t) * (neg->nrows + 1));
		qb = gdl_alloc(sizeof(int32_t) * (neg->nrows + 1));
		for (size_t i = 0; i < neg->nrows; i++)
		{
			uint64_t	k = ilp_pair_key(ea[i], eb ? eb[i] : 0);

			if (ilp_keyset_has(&known, k) || !ilp_keyset_add(&seen, k))
				continue;
			qa[nq] = ea[i];
			qb[nq] = eb ? eb[i] : 0;
			nq++;
		}
		ilp_keyset_free(&seen);
		gdl_free(ea);
		gdl_free(eb);
	}
	else if (need_examples && neg == NULL)
	{
		IlpNegSpec	dflt = {GDL_ILP_NEG_PCA, 4, 2, 0};

		ilp_negatives(w, &known, negspec ? negspec : &dflt, &qa, &qb, &nq);
		w->generated_neg = true;
	}
	ilp_keyset_free(&known);
	if ((int64_t) np + nq > INT32_MAX / 2)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "too many examples");
	w->nneg = (int32_t) nq;
	w->ex[0] = gdl_realloc(w->ex[0], sizeof(int32_t) * (np + nq + 1));
	w->ex[1] = gdl_realloc(w->ex[1], sizeof(int32_t) * (np + nq + 1));
	if (nq > 0)
	{
		memcpy(w->ex[0] + np, qa, sizeof(int32_t) * nq);
		memcpy(w->ex[1] + np, qb, sizeof(int32_t) * nq);
	}
	gdl_free(qa);
	gdl_free(qb);

	/* the target as a relation: positives and known facts (recursion looks it up) */
	{
		IlpPred    *t = &w->preds[w->npreds++];
		int32_t		nd[2] = {w->dom[w->cls[0]].n, w->arity == 2 ? w->dom[w->cls[1]].n : 0};
		int64_t		n = np + w->known->n;
		int32_t    *ta = gdl_alloc(sizeof(int32_t) * (n + 1));
		int32_t    *tb = gdl_alloc(sizeof(int32_t) * (n + 1));

		memcpy(ta, w->ex[0], sizeof(int32_t) * np);
		memcpy(tb, w->ex[1], sizeof(int32_t) * np);
		for (int64_t i = 0; i < w->known->n; i++)
		{
			ta[np + i] = w->known->a[i];
			tb[np + i] = w->arity == 2 ? w->known->b[i] : 0;
		}
		t->name = gdl_strdup(prob->target);
		t->arity = w->arity;
		t->cls[0] = w->cls[0];
		t->cls[1] = w->arity == 2 ? w->cls[1] : 0;
		t->kind = ILP_PRED_TARGET;
		t->base = -1;
		t->rel = ilp_rel_build(w->arity, nd, n, ta, w->arity == 2 ? tb : NULL);
		gdl_free(ta);
		gdl_free(tb);
	}

	/* sort by name; closures keep pointing at their base by name */
	{
		char	  **basename = gdl_alloc(sizeof(char *) * (w->npreds + 1));

		for (int i = 0; i < w->npreds; i++)
			basename[i] = w->preds[i].kind == ILP_PRED_CLOSURE ? w->preds[w->preds[i].base].name : NULL;
		for (int i = 0; i < w->npreds; i++)
			w->preds[i].base = i;	/* remember the original index */
		qsort(w->preds, w->npreds, sizeof(IlpPred), cmp_pred);
		for (int i = 0; i < w->npreds; i++)
		{
			char	   *bn = basename[w->preds[i].base];

			w->preds[i].base = -1;
			if (w->preds[i].kind == ILP_PRED_TARGET)
				w->target = i;
			if (bn != NULL)
				for (int j = 0; j < w->npreds; j++)
					if (w->preds[j].name == bn)
						w->preds[i].base = j;
		}
		gdl_free(basename);
	}
	if (w->npreds > INT16_MAX)
		gdl_error(GDL_ERR_LIMIT, NULL, NULL, "too many background relations for rule learning");
	return w;
}

/* The examples (positives, then negatives) as columns of original values. */
GdlColumns *
ilp_world_examples(const IlpWorld *w)
{
	GdlColumns *c = gdl_alloc(sizeof(GdlColumns));
	int32_t		n = w->npos + w->nneg;

	c->ncols = w->arity;
	c->nrows = n;
	c->cols = gdl_alloc(sizeof(int64_t *) * w->arity);
	for (int k = 0; k < w->arity; k++)
	{
		const IlpDomain *d = &w->dom[w->cls[k]];

		c->cols[k] = gdl_alloc(sizeof(int64_t) * (n + 1));
		for (int32_t i = 0; i < n; i++)
			c->cols[k][i] = d->vals[w->ex[k][i]];
	}
	return c;
}
