/*
 * ilp_nrule.c — rules of the refinement search: one-step refinements under
 * the bias (types, max_vars) and a canonical key so a rule reached along
 * several paths is visited once.
 *
 * A refinement adds one atom over a background relation whose arguments
 * are variables of the rule of a compatible type class, or fresh ones
 * (numbered in order of first use), at least one argument an old variable
 * so every body stays connected to the head; an atom already in the body is
 * not added twice.  With recursion the target itself is a relation of the
 * world: at most two of its atoms in a body, never one that restates the
 * head (t(X, Y) :- t(X, Y), ...).  The canonical key sorts atoms by predicate and argument
 * pattern, renames body variables by first occurrence and repeats until
 * stable: atom order and body variable names then do not matter (rules that
 * differ only by a symmetry the sort cannot break may be visited twice,
 * which costs time, not correctness).
 */
#include "ilp_refine.h"

#include <stdlib.h>
#include <string.h>

/* Compare two atoms by predicate, then arguments. */
static int
atom_cmp(const NxAtom *a, const NxAtom *b)
{
	if (a->pred != b->pred)
		return a->pred < b->pred ? -1 : 1;
	return memcmp(a->args, b->args, sizeof(a->args));
}

/* One pass: order atoms, rename body variables by first occurrence. */
static bool
canon_pass(NxRule *r, int arity)
{
	int8_t		map[NX_MAX_VARS];
	int			next = arity;
	bool		changed = false;
	NxAtom		tmp[NX_MAX_ATOMS];

	/* insertion sort: few atoms */
	for (int i = 1; i < r->natoms; i++)
		for (int j = i; j > 0 && atom_cmp(&r->atoms[j], &r->atoms[j - 1]) < 0; j--)
		{
			NxAtom		t = r->atoms[j];

			r->atoms[j] = r->atoms[j - 1];
			r->atoms[j - 1] = t;
			changed = true;
		}
	for (int v = 0; v < NX_MAX_VARS; v++)
		map[v] = v < arity ? v : -1;
	memcpy(tmp, r->atoms, sizeof(NxAtom) * r->natoms);
	for (int i = 0; i < r->natoms; i++)
		for (int k = 0; k < NX_MAX_ARITY; k++)
		{
			int			v = tmp[i].args[k];

			if (v < 0)
				continue;
			if (map[v] < 0)
				map[v] = next++;
			if (map[v] != v)
				changed = true;
			r->atoms[i].args[k] = map[v];
		}
	if (changed)
	{
		int8_t		cls[NX_MAX_VARS];

		memcpy(cls, r->vcls, sizeof(cls));
		for (int v = 0; v < r->nvars; v++)
			if (map[v] >= 0)
				r->vcls[map[v]] = cls[v];
	}
	return changed;
}

/* Bring a rule to its canonical form (see the file comment). */
void
nx_rule_canon(NxRule *r, int arity)
{
	for (int i = 0; i < 4 && canon_pass(r, arity); i++)
		;
}

/* 64-bit key of a canonical rule. */
uint64_t
nx_rule_key(const NxRule *r)
{
	uint64_t	h = ilp_mix64((uint64_t) r->natoms);

	for (int i = 0; i < r->natoms; i++)
	{
		h = ilp_mix64(h ^ (uint64_t) (uint16_t) r->atoms[i].pred);
		for (int k = 0; k < NX_MAX_ARITY; k++)
			h = ilp_mix64(h ^ (uint64_t) (uint8_t) r->atoms[i].args[k]);
	}
	return h;
}

/* Does every head variable occur in the body? */
bool
nx_rule_safe(const NxRule *r, int arity)
{
	for (int v = 0; v < arity; v++)
	{
		bool		found = false;

		for (int i = 0; i < r->natoms && !found; i++)
			for (int k = 0; k < NX_MAX_ARITY && !found; k++)
				found = r->atoms[i].args[k] == v;
		if (!found)
			return false;
	}
	return true;
}

/* Enumeration state of the arguments of one new atom. */
typedef struct ArgGen
{
	const NxWorld *w;
	const NxRule *r;
	int			max_vars;
	int			pred;
	NxAtom		atom;
	int			nfresh;
	bool		old;			/* some argument is an old variable */
	NxRule	   *out;
	int			n;
	int			cap;
} ArgGen;

/* Emit the rule with the completed atom, unless it repeats one. */
static void
emit(ArgGen *g)
{
	NxRule		c = *g->r;
	const NxRel *R = &g->w->rels[g->pred];

	if (!g->old)
		return;
	for (int i = 0; i < c.natoms; i++)
		if (atom_cmp(&c.atoms[i], &g->atom) == 0)
			return;
	if (g->pred == g->w->target_rel)
	{
		/* the target at most twice in a body, never restating the head */
		int			uses = 0;
		bool		same = true;

		for (int i = 0; i < c.natoms; i++)
			uses += c.atoms[i].pred == g->pred;
		for (int k = 0; k < R->arity; k++)
			same = same && g->atom.args[k] == k;
		if (uses >= 2 || same)
			return;
	}
	for (int k = 0; k < R->arity; k++)
		if (g->atom.args[k] >= c.nvars)
			c.vcls[g->atom.args[k]] = (int8_t) R->cls[k];
	c.nvars += g->nfresh;
	c.atoms[c.natoms++] = g->atom;
	if (g->n == g->cap)
	{
		g->cap = g->cap * 2 + 64;
		g->out = gdl_realloc(g->out, sizeof(NxRule) * g->cap);
	}
	g->out[g->n++] = c;
}

/* Choose argument k of the new atom, and recurse. */
static void
gen_arg(ArgGen *g, int k)
{
	const NxRel *R = &g->w->rels[g->pred];
	int			nv = g->r->nvars;

	if (k == R->arity)
	{
		emit(g);
		return;
	}
	for (int v = 0; v < nv; v++)
		if (nx_compat(g->w, g->r->vcls[v], R->cls[k]))
		{
			bool		was = g->old;

			g->atom.args[k] = (int8_t) v;
			g->old = true;
			gen_arg(g, k + 1);
			g->old = was;
		}
	/* a fresh variable already used in this atom (same class), or the next one */
	for (int j = 0; j < g->nfresh; j++)
	{
		int			v = nv + j;
		int			vc = -1;

		for (int kk = 0; kk < k; kk++)
			if (g->atom.args[kk] == v)
				vc = R->cls[kk];
		if (vc >= 0 && nx_compat(g->w, vc, R->cls[k]))
		{
			g->atom.args[k] = (int8_t) v;
			gen_arg(g, k + 1);
		}
	}
	if (nv + g->nfresh < g->max_vars)
	{
		g->atom.args[k] = (int8_t) (nv + g->nfresh);
		g->nfresh++;
		gen_arg(g, k + 1);
		g->nfresh--;
	}
}

/*
 * Every one-step refinement of r (one more atom), not yet canonical;
 * written to *out (gdl_alloc'ed), the count returned.
 */
int
nx_refinements(const NxWorld *w, const NxRule *r, int max_vars, NxRule **out)
{
	ArgGen		g;

	memset(&g, 0, sizeof(g));
	g.w = w;
	g.r = r;
	g.max_vars = max_vars;
	if (r->natoms < NX_MAX_ATOMS)
		for (int p = 0; p < w->nrels; p++)
		{
			g.pred = p;
			memset(&g.atom, -1, sizeof(g.atom));
			g.atom.pred = (int16_t) p;
			g.nfresh = 0;
			g.old = false;
			gen_arg(&g, 0);
		}
	*out = g.out;
	return g.n;
}
