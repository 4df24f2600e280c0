/*
 * plan_mirror.c — rule versions that are mirror images of one another.
 *
 * valueAlias(X, Y) :- valueFlow(Z, X), valueFlow(Z, Y) is unchanged when X
 * and Y are swapped: the renaming X <-> Y maps its body onto itself.  Of its
 * two semi-naive versions, the one with the delta at the second atom then
 * derives nothing that the transposed output of the first (delta at the
 * first atom, full at every other) does not: for any derivation theta of
 * the first, theta composed with the renaming is a derivation with the
 * delta at the second atom, of the transposed head tuple, and every
 * derivation of the second version is one of those.  So the engine runs
 * the first version only and adds its rows transposed (exec_rule.c), which
 * saves the second version's join and, since the first's output comes
 * grouped and is deduplicated before it is transposed, most of the rows
 * the round would have sorted.
 *
 * In general: a renaming sigma of a clause's variables that permutes its
 * head variables (head position i goes to position perm[i]) and maps its
 * body literals one to one onto body literals, where an atom of a binary
 * predicate known to be symmetric may match with its two arguments
 * swapped.  Symmetric predicates are found as a greatest fixpoint: every
 * binary derived predicate whose every clause maps onto itself under a
 * renaming that swaps the head's two arguments, assuming the others
 * symmetric (by induction over the rounds, each round's relations are then
 * symmetric).  CSPA's memoryAlias and valueAlias are; so its three-atom
 * valueAlias rule mirrors too.
 *
 * When the head predicate is itself symmetric (CSPA's valueAlias), so is
 * its full relation in every round, and a row the full relation holds has
 * its mirror there too: the version's set is first stripped of what full
 * holds and only the rest is mirrored, a few percent of the rows on CSPA.
 *
 * The first version (delta at the first recursive literal f) reads full
 * everywhere else, so the mirror of its derivations holds every derivation
 * of the version whose delta literal sigma maps onto f; that version is
 * marked `mirrored` and skipped by the single-device driver.  The
 * partitioned driver runs every version and ignores mirrors.
 */
#include "plan_int.h"

#include <string.h>

/* A partial renaming and literal matching under construction. */
typedef struct Match
{
	const GdlClause *c;
	const GdlClauseInfo *info;
	const bool *sym;			/* per predicate: known symmetric */
	int		   *sigma;			/* per variable: its image, -1 unset */
	int		   *inv;			/* per variable: its preimage, -1 unset */
	int		   *lit_map;		/* per literal: the literal it maps onto */
	bool	   *lit_used;
} Match;

/* Set sigma(v) = w, or check it; false on a conflict. */
static bool
bind_var(Match *m, int v, int w)
{
	if (m->sigma[v] < 0 && m->inv[w] < 0)
	{
		m->sigma[v] = w;
		m->inv[w] = v;
		return true;
	}
	return m->sigma[v] == w;
}

/* Is term t, renamed, the term u?  Variables bind; constants must be equal. */
static bool
match_term(Match *m, const GdlTerm *t, const GdlTerm *u)
{
	if (t->kind != u->kind)
		return false;
	switch (t->kind)
	{
		case GDL_TERM_VAR:
			return bind_var(m, t->var, u->var);
		case GDL_TERM_ANON:
			return true;
		case GDL_TERM_INT:
			return t->ival == u->ival;
		case GDL_TERM_FLOAT:
			return t->fval == u->fval;
		case GDL_TERM_BOOL:
			return t->bval == u->bval;
		case GDL_TERM_TEXT:
			return t->quoted == u->quoted && strcmp(t->text, u->text) == 0;
		default:
			return false;		/* arithmetic, aggregates: not matched */
	}
}

/* The comparison that "rhs op' lhs" is for "lhs op rhs". */
static GdlCmpOp
cmp_swapped(GdlCmpOp op)
{
	switch (op)
	{
		case GDL_CMP_LT:
			return GDL_CMP_GT;
		case GDL_CMP_LE:
			return GDL_CMP_GE;
		case GDL_CMP_GT:
			return GDL_CMP_LT;
		case GDL_CMP_GE:
			return GDL_CMP_LE;
		default:
			return op;
	}
}

/* Is literal i, renamed (flipped: a symmetric atom read backwards), literal j? */
static bool
match_lit(Match *m, int i, int j, bool flip)
{
	const GdlLiteral *a = &m->c->body[i],
			   *b = &m->c->body[j];
	int			k;

	if (a->kind != b->kind || m->info->lit_assigns[i] || m->info->lit_assigns[j])
		return false;
	if (a->kind == GDL_LIT_CMP)
	{
		if (!flip)
			return a->cmp == b->cmp && match_term(m, a->lhs, b->lhs) && match_term(m, a->rhs, b->rhs);
		return cmp_swapped(a->cmp) == b->cmp && match_term(m, a->lhs, b->rhs) &&
			match_term(m, a->rhs, b->lhs);
	}
	if (m->info->lit_pred[i] != m->info->lit_pred[j] || a->atom.nargs != b->atom.nargs)
		return false;
	for (k = 0; k < a->atom.nargs; k++)
		if (!match_term(m, a->atom.args[k], b->atom.args[flip ? a->atom.nargs - 1 - k : k]))
			return false;
	return true;
}

/* Match literals i.. onto unused literals, backtracking; true when all match. */
static bool
match_from(Match *m, int i)
{
	int			nvars = m->c->nvars,
				n = m->c->nbody,
				j;
	int		   *save;

	if (i == n)
		return true;
	save = gdl_alloc(sizeof(int) * (2 * nvars + 1));
	for (j = 0; j < n; j++)
	{
		int			flips = 1,
					f;
		const GdlLiteral *a = &m->c->body[i];

		if (m->lit_used[j])
			continue;
		/* a comparison, or an atom of a symmetric predicate, may match swapped */
		if (a->kind == GDL_LIT_CMP ||
			(a->atom.nargs == 2 && m->info->lit_pred[i] >= 0 && m->sym[m->info->lit_pred[i]]))
			flips = 2;
		for (f = 0; f < flips; f++)
		{
			memcpy(save, m->sigma, sizeof(int) * nvars);
			memcpy(save + nvars, m->inv, sizeof(int) * nvars);
			if (match_lit(m, i, j, f == 1))
			{
				m->lit_used[j] = true;
				m->lit_map[i] = j;
				if (match_from(m, i + 1))
				{
					gdl_free(save);
					return true;
				}
				m->lit_used[j] = false;
			}
			memcpy(m->sigma, save, sizeof(int) * nvars);
			memcpy(m->inv, save + nvars, sizeof(int) * nvars);
		}
	}
	gdl_free(save);
	return false;
}

/*
 * Find a renaming of clause ci that maps head argument i onto head argument
 * perm[i] (the head's arguments variables) and the body onto itself; fills
 * lit_map (per literal: its image).  False when there is none.
 */
static bool
find_renaming(const GdlAnalysis *a, const bool *sym, int ci, const int *perm, int *lit_map)
{
	const GdlClauseInfo *info = &a->clauses[ci];
	const GdlClause *c = info->clause;
	Match		m;
	bool		ok = true;
	int			i;

	memset(&m, 0, sizeof(m));
	m.c = c;
	m.info = info;
	m.sym = sym;
	m.sigma = gdl_alloc(sizeof(int) * (c->nvars + 1));
	m.inv = gdl_alloc(sizeof(int) * (c->nvars + 1));
	m.lit_map = lit_map;
	m.lit_used = gdl_alloc(sizeof(bool) * (c->nbody + 1));
	for (i = 0; i < c->nvars; i++)
		m.sigma[i] = m.inv[i] = -1;
	for (i = 0; i < c->head.nargs && ok; i++)
		ok = c->head.args[i]->kind == GDL_TERM_VAR && c->head.args[perm[i]]->kind == GDL_TERM_VAR &&
			bind_var(&m, c->head.args[i]->var, c->head.args[perm[i]]->var);
	ok = ok && match_from(&m, 0);
	gdl_free(m.sigma);
	gdl_free(m.inv);
	gdl_free(m.lit_used);
	return ok;
}

/*
 * The binary derived predicates that are symmetric (every clause maps onto
 * itself with the head's arguments swapped), a greatest fixpoint; a
 * gdl_alloc'ed flag per predicate.
 */
static bool *
symmetric_preds(const GdlAnalysis *a)
{
	bool	   *sym = gdl_alloc(sizeof(bool) * (a->npreds > 0 ? a->npreds : 1));
	static const int swap[2] = {1, 0};
	bool		changed = true;
	int			p,
				k;

	for (p = 0; p < a->npreds; p++)
		sym[p] = !a->preds[p].is_edb && a->preds[p].arity == 2 && !a->preds[p].has_agg &&
			a->preds[p].nclauses > 0;
	while (changed)
	{
		changed = false;
		for (p = 0; p < a->npreds; p++)
			for (k = 0; sym[p] && k < a->preds[p].nclauses; k++)
			{
				int			ci = a->preds[p].clauses[k];
				const GdlClause *c = a->clauses[ci].clause;
				int		   *lit_map = gdl_alloc(sizeof(int) * (c->nbody + 1));
				bool		same_var = c->head.args[0]->kind == GDL_TERM_VAR &&
					c->head.args[1]->kind == GDL_TERM_VAR &&
					c->head.args[0]->var == c->head.args[1]->var;

				/* p(X, X) :- body is symmetric whatever the body */
				if (!same_var && !find_renaming(a, sym, ci, swap, lit_map))
				{
					sym[p] = false;
					changed = true;
				}
				gdl_free(lit_map);
			}
	}
	return sym;
}

/*
 * Mark mirrors among the delta versions of stratum ps (rec[0..nrec), in
 * clause order, delta literals ascending): for each clause with a binary
 * head of two distinct variables whose body maps onto itself with the two
 * swapped, the first version gets mirror_perm and the version whose delta
 * literal the renaming maps onto the first's is marked mirrored.
 */
void
plan_mark_mirrors(const GdlAnalysis *a, PlanStratum *ps)
{
	static const int swap[2] = {1, 0};
	bool	   *sym = NULL;
	int			i,
				j;

	for (i = 0; i < ps->nrec; i++)
	{
		PlanRule   *first = &ps->rec[i];
		const GdlClause *c = a->clauses[first->clause].clause;
		const GdlPred *head = &a->preds[first->head_pred];
		int		   *lit_map;
		int			l,
					skip = -1;

		if (i > 0 && ps->rec[i - 1].clause == first->clause)
			continue;			/* not the clause's first version */
		if (first->is_agg || c->head.nargs != 2 || c->head.args[0]->kind != GDL_TERM_VAR ||
			c->head.args[1]->kind != GDL_TERM_VAR || c->head.args[0]->var == c->head.args[1]->var ||
			(head->types && head->types[0] != head->types[1]))
			continue;			/* a transposed row would not fit the head's columns */
		if (i + 1 >= ps->nrec || ps->rec[i + 1].clause != first->clause)
			continue;			/* one version: nothing to mirror */
		if (sym == NULL)
			sym = symmetric_preds(a);
		lit_map = gdl_alloc(sizeof(int) * (c->nbody + 1));
		if (find_renaming(a, sym, first->clause, swap, lit_map))
			for (l = 0; l < c->nbody; l++)
				if (lit_map[l] == first->delta_lit && l != first->delta_lit)
					skip = l;
		gdl_free(lit_map);
		if (skip < 0)
			continue;
		for (j = i + 1; j < ps->nrec && ps->rec[j].clause == first->clause; j++)
			if (ps->rec[j].delta_lit == skip)
			{
				ps->rec[j].mirrored = true;
				ps->rec[j].mirror_of = first->delta_lit;
				first->mirror_perm = gdl_alloc(sizeof(int) * 2);
				first->mirror_perm[0] = 1;
				first->mirror_perm[1] = 0;
				first->mirror_skips = skip;
				first->mirror_sym_head = sym[first->head_pred];
			}
	}
	if (sym)
		gdl_free(sym);
}
