/*
 * ilp_nsolve.c — does a rule of the refinement search derive a head tuple?
 *
 * A rule's body is joined from the head's values (the example), atoms in
 * a greedy order fixed once per rule (nx_plan): checks whose arguments are
 * all bound first, then the atom with the most bound arguments, the smaller
 * relation on ties.  A bound argument finds its tuples by binary search in
 * the relation's order for that argument (the narrowest bound argument is
 * used); the search stops at the first solution.  Joins count their steps:
 * every 65536 the host may interrupt, and past the deadline the solver
 * marks itself expired and answers false from then on (the caller discards
 * what it was computing).
 */
#include "ilp_refine.h"

#include <string.h>

/* Fix the join order of a rule's atoms; see the file comment. */
void
nx_plan(const NxWorld *w, const NxRule *r, NxPlan *p)
{
	uint32_t	bound = 0;
	bool		used[NX_MAX_ATOMS] = {0};

	for (int v = 0; v < w->arity; v++)
		bound |= 1u << v;
	p->n = r->natoms;
	for (int i = 0; i < r->natoms; i++)
	{
		int			best = -1;
		int			best_nb = -1;
		bool		best_all = false;

		for (int a = 0; a < r->natoms; a++)
		{
			const NxAtom *at = &r->atoms[a];
			const NxRel *R = &w->rels[at->pred];
			int			nb = 0;
			bool		all;

			if (used[a])
				continue;
			for (int k = 0; k < R->arity; k++)
				nb += (bound >> at->args[k]) & 1;
			all = nb == R->arity;
			if (best < 0 || (all && !best_all) ||
				(all == best_all && (nb > best_nb ||
									 (nb == best_nb && R->n < w->rels[r->atoms[best].pred].n))))
			{
				best = a;
				best_nb = nb;
				best_all = all;
			}
		}
		used[best] = true;
		p->atom[i] = (int8_t) best;
		p->bound[i] = 0;
		for (int k = 0; k < w->rels[r->atoms[best].pred].arity; k++)
			if ((bound >> r->atoms[best].args[k]) & 1)
				p->bound[i] |= (uint8_t) (1u << k);
		for (int k = 0; k < w->rels[r->atoms[best].pred].arity; k++)
			bound |= 1u << r->atoms[best].args[k];
	}
}

/* First index of a sorted array whose value is >= v. */
static int64_t
lower(const int64_t *a, int64_t n, int64_t v)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First index of a sorted array whose value is > v. */
static int64_t
upper(const int64_t *a, int64_t n, int64_t v)
{
	int64_t		lo = 0,
				hi = n;

	while (lo < hi)
	{
		int64_t		mid = (lo + hi) / 2;

		if (a[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Count a step; past the deadline the solver expires. */
static inline bool
tick(NxSolver *s)
{
	if ((++s->steps & 0xFFFF) == 0)
	{
		gdl_check_interrupts();
		if (s->deadline > 0 && ilp_now() > s->deadline)
			s->expired = true;
	}
	return !s->expired;
}

/* Join atoms step.. of the plan under the values bound so far. */
static bool
solve(NxSolver *s, const NxRule *r, const NxPlan *p, int step, int64_t *vals)
{
	const NxAtom *at;
	const NxRel *R;
	int			karg = -1;
	int64_t		lo = 0,
				hi;

	if (step == p->n)
		return true;
	at = &r->atoms[p->atom[step]];
	R = &s->w->rels[at->pred];
	hi = R->n;
	for (int k = 0; k < R->arity; k++)
		if ((p->bound[step] >> k) & 1)
		{
			int64_t		v = vals[at->args[k]];
			int64_t		l = lower(R->sval[k], R->n, v);
			int64_t		h = upper(R->sval[k], R->n, v);

			if (l == h)
				return false;
			if (karg < 0 || h - l < hi - lo)
			{
				karg = k;
				lo = l;
				hi = h;
			}
		}
	for (int64_t j = lo; j < hi; j++)
	{
		int32_t		t = karg >= 0 ? R->perm[karg][j] : (int32_t) j;
		uint32_t	set = 0;
		bool		ok = true;

		if (!tick(s))
			return false;
		for (int k = 0; k < R->arity && ok; k++)
		{
			int			v = at->args[k];
			int64_t		x = R->col[k][t];

			if (((p->bound[step] >> k) & 1) || ((set >> v) & 1))
				ok = vals[v] == x;
			else
			{
				vals[v] = x;
				set |= 1u << v;
			}
		}
		if (ok && solve(s, r, p, step + 1, vals))
			return true;
		if (s->expired)
			return false;
	}
	return false;
}

/* Does the rule derive the head tuple? */
bool
nx_derives(NxSolver *s, const NxRule *r, const NxPlan *p, const int64_t *head)
{
	int64_t		vals[NX_MAX_VARS];

	if (s->expired)
		return false;
	memcpy(vals, head, sizeof(int64_t) * s->w->arity);
	return solve(s, r, p, 0, vals);
}

/*
 * The examples among from[0..nfrom-1] (ascending) that the rule derives,
 * written to out; returns how many.  Expired: a partial answer.
 */
int32_t
nx_cover(NxSolver *s, const NxRule *r, const int32_t *from, int32_t nfrom, int32_t *out)
{
	NxPlan		p;
	int32_t		n = 0;
	int64_t		head[NX_MAX_ARITY];

	nx_plan(s->w, r, &p);
	for (int32_t i = 0; i < nfrom && !s->expired; i++)
	{
		for (int k = 0; k < s->w->arity; k++)
			head[k] = s->w->ex[k][from[i]];
		if (nx_derives(s, r, &p, head))
			out[n++] = from[i];
	}
	return n;
}

/* Variable names: head arguments first. */
static const char *const nx_names[NX_MAX_VARS] = {
	"X", "Y", "Z", "W", "V", "U", "T", "S", "R", "Q", "P", "O"
};

/* The rule as a Datalog clause, e.g. "f(X) :- p(X, Y), q(Y)." */
char *
nx_rule_text(const NxWorld *w, const NxRule *r)
{
	GdlBuf		b;

	gdl_buf_init(&b);
	gdl_buf_append(&b, "%s(", w->target);
	for (int k = 0; k < w->arity; k++)
		gdl_buf_append(&b, "%s%s", k ? ", " : "", nx_names[k]);
	gdl_buf_append(&b, ") :- ");
	for (int i = 0; i < r->natoms; i++)
	{
		const NxRel *R = &w->rels[r->atoms[i].pred];

		gdl_buf_append(&b, "%s%s(", i ? ", " : "", R->name);
		for (int k = 0; k < R->arity; k++)
			gdl_buf_append(&b, "%s%s", k ? ", " : "", nx_names[r->atoms[i].args[k]]);
		gdl_buf_putc(&b, ')');
	}
	gdl_buf_putc(&b, '.');
	return b.data;
}
