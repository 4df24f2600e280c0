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
 *
 * Coverage (nx_cover) does not repeat work the answer cannot depend on: the
 * body's independent parts are joined separately, a part once per distinct
 * projection of the examples on the head variables it uses, and inside a
 * join the rest from a step where a bound variable drops out is tabled by
 * the values it does depend on (solve).  Answers are exactly the plain
 * join's (nx_derives, which tables nothing; test_ilp_refine compares them).
 */
#include "ilp_refine.h"

#include <stdlib.h>
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
	/*
	 * What the rest of the join from each step depends on; head variables
	 * the rule does not use are no information that drops out.
	 */
	bound = 0;
	for (int i = 0; i < r->natoms; i++)
		for (int k = 0; k < w->rels[r->atoms[i].pred].arity; k++)
			if (r->atoms[i].args[k] < w->arity)
				bound |= 1u << r->atoms[i].args[k];
	for (int i = 0; i < p->n; i++)
	{
		uint32_t	later = 0;

		for (int j = i; j < p->n; j++)
			for (int k = 0; k < w->rels[r->atoms[p->atom[j]].pred].arity; k++)
				later |= 1u << r->atoms[p->atom[j]].args[k];
		p->rest[i] = bound & later;
		p->memo[i] = i > 0 && p->rest[i] != bound;
		for (int k = 0; k < w->rels[r->atoms[p->atom[i]].pred].arity; k++)
			bound |= 1u << r->atoms[p->atom[i]].args[k];
	}
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

static bool solve(NxSolver *s, const NxRule *r, const NxPlan *p, int step, int64_t *vals);

/* Join atoms step.. of the plan under the values bound so far. */
static bool
solve_step(NxSolver *s, const NxRule *r, const NxPlan *p, int step, int64_t *vals)
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
			int64_t		l = ilp_search_i64(R->sval[k], R->n, v, false);
			int64_t		h = ilp_search_i64(R->sval[k], R->n, v, true);

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

/*
 * solve_step, tabled: the rest of a join from step i depends only on the
 * values of rest[i], so where a bound variable drops out (memo[i]) its
 * answer is looked up, or computed and stored, under two independent
 * 64-bit hashes of (i, those values) — a false match needs both to
 * collide.  The table is a fixed-size cache: entries of older generations
 * are free, and once half full nothing more is stored for this part.
 */
static bool
solve(NxSolver *s, const NxRule *r, const NxPlan *p, int step, int64_t *vals)
{
	uint64_t	h1,
				h2,
				i;
	bool		ans;
	NxMemo	   *m;

	if (step == p->n || !p->memo[step] || s->memo == NULL)
		return solve_step(s, r, p, step, vals);
	h1 = ilp_mix64(0x243f6a8885a308d3ULL ^ (uint64_t) step);
	h2 = ilp_mix64(0x13198a2e03707344ULL + (uint64_t) step);
	for (int v = 0; v < NX_MAX_VARS; v++)
		if ((p->rest[step] >> v) & 1)
		{
			h1 = ilp_mix64(h1 ^ (uint64_t) vals[v]);
			h2 = ilp_mix64((h2 + (uint64_t) vals[v]) * 0x9e3779b97f4a7c15ULL);
		}
	m = s->memo;
	for (i = h1 & (NX_MEMO_SIZE - 1); m->e[i].gen == m->cur; i = (i + 1) & (NX_MEMO_SIZE - 1))
		if (m->e[i].h1 == h1 && m->e[i].h2 == h2)
			return m->e[i].ans;
	ans = solve_step(s, r, p, step, vals);
	if (!s->expired && m->n < NX_MEMO_SIZE / 2)
	{
		/* the slot found free may have been taken by the nested calls */
		while (m->e[i].gen == m->cur)
			i = (i + 1) & (NX_MEMO_SIZE - 1);
		m->e[i].h1 = h1;
		m->e[i].h2 = h2;
		m->e[i].gen = m->cur;
		m->e[i].ans = ans;
		m->n++;
	}
	return ans;
}

/* Does the rule derive the head tuple (tabled rests when 'memo')? */
static bool
derives(NxSolver *s, const NxRule *r, const NxPlan *p, const int64_t *head, bool memo)
{
	int64_t		vals[NX_MAX_VARS];
	NxMemo	   *m = s->memo;
	bool		yes;

	if (s->expired)
		return false;
	memcpy(vals, head, sizeof(int64_t) * s->w->arity);
	if (!memo)
		s->memo = NULL;
	yes = solve(s, r, p, 0, vals);
	s->memo = m;
	return yes;
}

/* Does the rule derive the head tuple?  (A plain join, nothing tabled.) */
bool
nx_derives(NxSolver *s, const NxRule *r, const NxPlan *p, const int64_t *head)
{
	return derives(s, r, p, head, false);
}

/*
 * One independent part of a body: atoms linked through body variables.
 * Head variables are bound by the example, so parts that share only head
 * variables are joined separately, and a part's answer depends only on the
 * example's values at the head variables it uses (its key).
 */
typedef struct NxPart
{
	NxRule		r;				/* the part's atoms, variable numbers unchanged */
	NxPlan		p;
	uint32_t	key;			/* bit v: head variable v occurs in the part */
	int32_t    *slot;			/* memo: representative example id, or -1 */
	bool	   *ans;
	uint64_t	mask;
	uint32_t	gen;			/* the solver's memo generation of this part */
	int32_t		nmemo;
} NxPart;

/* Split a rule's body into its independent parts (see NxPart). */
static int
split_parts(const NxWorld *w, const NxRule *r, NxPart *parts)
{
	int			comp[NX_MAX_ATOMS];
	int			np = 0;

	for (int i = 0; i < r->natoms; i++)
		comp[i] = i;
	/* union atoms that share a body variable (few atoms: repeat to a fixpoint) */
	for (bool changed = true; changed;)
	{
		changed = false;
		for (int i = 0; i < r->natoms; i++)
			for (int j = i + 1; j < r->natoms; j++)
			{
				const NxRel *Ri = &w->rels[r->atoms[i].pred];
				const NxRel *Rj = &w->rels[r->atoms[j].pred];
				bool		share = false;

				if (comp[i] == comp[j])
					continue;
				for (int k = 0; k < Ri->arity && !share; k++)
					for (int l = 0; l < Rj->arity && !share; l++)
						share = r->atoms[i].args[k] >= w->arity &&
							r->atoms[i].args[k] == r->atoms[j].args[l];
				if (share)
				{
					int			lo = comp[i] < comp[j] ? comp[i] : comp[j];
					int			hi = comp[i] + comp[j] - lo;

					for (int t = 0; t < r->natoms; t++)
						if (comp[t] == hi)
							comp[t] = lo;
					changed = true;
				}
			}
	}
	for (int c = 0; c < r->natoms; c++)
	{
		NxPart	   *pt = &parts[np];
		bool		any = false;

		memset(pt, 0, sizeof(*pt));
		pt->r.nvars = r->nvars;
		memcpy(pt->r.vcls, r->vcls, sizeof(r->vcls));
		for (int i = 0; i < r->natoms; i++)
			if (comp[i] == c)
			{
				pt->r.atoms[pt->r.natoms++] = r->atoms[i];
				for (int k = 0; k < w->rels[r->atoms[i].pred].arity; k++)
					if (r->atoms[i].args[k] < w->arity)
						pt->key |= 1u << r->atoms[i].args[k];
				any = true;
			}
		if (any)
		{
			nx_plan(w, &pt->r, &pt->p);
			np++;
		}
	}
	return np;
}

/* Hash of an example's values at the head variables of 'key'. */
static uint64_t
proj_hash(const NxWorld *w, uint32_t key, int32_t e)
{
	uint64_t	h = 0x9e3779b97f4a7c15ULL;

	for (int k = 0; k < w->arity; k++)
		if ((key >> k) & 1)
			h = ilp_mix64(h ^ (uint64_t) w->ex[k][e]);
	return h;
}

/* Do examples a and b agree on the head variables of 'key'? */
static bool
proj_equal(const NxWorld *w, uint32_t key, int32_t a, int32_t b)
{
	for (int k = 0; k < w->arity; k++)
		if (((key >> k) & 1) && w->ex[k][a] != w->ex[k][b])
			return false;
	return true;
}

/* Does part pt hold for example e (memoized when the part has a table)? */
static bool
part_holds(NxSolver *s, NxPart *pt, int32_t e)
{
	const NxWorld *w = s->w;
	uint64_t	h = 0;
	int64_t		head[NX_MAX_ARITY];
	bool		yes;

	if (pt->slot)
	{
		h = proj_hash(w, pt->key, e) & pt->mask;
		while (pt->slot[h] >= 0 && !proj_equal(w, pt->key, pt->slot[h], e))
			h = (h + 1) & pt->mask;
		if (pt->slot[h] >= 0)
			return pt->ans[h];
	}
	for (int k = 0; k < w->arity; k++)
		head[k] = w->ex[k][e];
	yes = derives(s, &pt->r, &pt->p, head, true);
	if (pt->slot && !s->expired)
	{
		pt->slot[h] = e;
		pt->ans[h] = yes;
	}
	return yes;
}

/* qsort: parts with fewer head variables (more reuse) first. */
static int
cmp_part(const void *x, const void *y)
{
	int			a = __builtin_popcount(((const NxPart *) x)->key),
				b = __builtin_popcount(((const NxPart *) y)->key);

	return a < b ? -1 : a > b;
}

/*
 * The examples among from[0..nfrom-1] (ascending) that the rule derives,
 * written to out; returns how many.  Expired: a partial answer.
 *
 * The body is split into independent parts (atoms linked by body
 * variables; the head's are bound by the example) and an example is
 * covered when every part holds.  A part's answer depends only on the
 * example's values at the head variables it uses, so a part that does not
 * use all of them is joined once per distinct projection and its answer
 * reused (an open-addressing table of representative example ids).  This
 * is the "independent goals" transformation of ILP systems (Santos Costa
 * et al., JMLR 2003): eight-puzzle's `true_cell(X, Z, U, V), ...,
 * true_cell(T, Z, Z, S), true_cell(T, W, Z, S)` joins its second part
 * (all 500 states, no answer) once per (Z, W) pair, not per example.
 */
int32_t
nx_cover(NxSolver *s, const NxRule *r, const int32_t *from, int32_t nfrom, int32_t *out)
{
	const NxWorld *w = s->w;
	NxPart		parts[NX_MAX_ATOMS + 1];
	int			np;
	int32_t		n = 0;
	uint32_t	all = (1u << w->arity) - 1;

	if (s->memo == NULL)
	{
		s->memo = gdl_alloc(sizeof(NxMemo));
		s->memo->e = gdl_alloc(sizeof(NxMemoEntry) * NX_MEMO_SIZE);
		memset(s->memo->e, 0, sizeof(NxMemoEntry) * NX_MEMO_SIZE);
		s->memo->gen = s->memo->cur = 0;
		s->memo->n = 0;
	}
	np = split_parts(w, r, parts);
	if (np > 1)
		qsort(parts, np, sizeof(NxPart), cmp_part);
	for (int i = 0; i < np; i++)
		if (parts[i].key != all && nfrom > 1)
		{
			uint64_t	size = 16;

			while (size < 2 * (uint64_t) nfrom)
				size <<= 1;
			parts[i].mask = size - 1;
			parts[i].slot = gdl_alloc(sizeof(int32_t) * size);
			parts[i].ans = gdl_alloc(sizeof(bool) * size);
			memset(parts[i].slot, -1, sizeof(int32_t) * size);
		}
	for (int i = 0; i < np; i++)
	{
		/* each part's tabled rests under their own generation */
		parts[i].gen = ++s->memo->gen;
		if (parts[i].gen == 0)
		{
			/* wrapped around: forget every generation */
			memset(s->memo->e, 0, sizeof(NxMemoEntry) * NX_MEMO_SIZE);
			for (int j = 0; j < i; j++)
				parts[j].gen = ++s->memo->gen;
			parts[i].gen = ++s->memo->gen;
		}
		parts[i].nmemo = 0;
	}
	for (int32_t i = 0; i < nfrom && !s->expired; i++)
	{
		bool		yes = true;

		for (int j = 0; j < np && yes; j++)
		{
			s->memo->cur = parts[j].gen;
			s->memo->n = parts[j].nmemo;
			yes = part_holds(s, &parts[j], from[i]);
			parts[j].nmemo = s->memo->n;
		}
		if (yes && !s->expired)
			out[n++] = from[i];
	}
	for (int i = 0; i < np; i++)
		if (parts[i].slot)
		{
			gdl_free(parts[i].slot);
			gdl_free(parts[i].ans);
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
	gdl_pred_name_to_buf(&b, w->target);
	gdl_buf_putc(&b, '(');
	for (int k = 0; k < w->arity; k++)
		gdl_buf_append(&b, "%s%s", k ? ", " : "", nx_names[k]);
	gdl_buf_append(&b, ") :- ");
	for (int i = 0; i < r->natoms; i++)
	{
		const NxRel *R = &w->rels[r->atoms[i].pred];

		gdl_buf_append(&b, "%s%s(", i ? ", " : "", gdl_pred_name_quote(R->name));
		for (int k = 0; k < R->arity; k++)
			gdl_buf_append(&b, "%s%s", k ? ", " : "", nx_names[r->atoms[i].args[k]]);
		gdl_buf_putc(&b, ')');
	}
	gdl_buf_putc(&b, '.');
	return b.data;
}
