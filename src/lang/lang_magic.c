/*
 * lang_magic.c — goal-directed evaluation by the magic-sets rewrite: an
 * analysed program and a goal predicate with some arguments bound become a
 * program that derives only what the goal needs.
 *
 * For the goal anc("abe", Y) over
 *
 *   anc(X, Y) :- parent(X, Y).
 *   anc(X, Z) :- anc(X, Y), parent(Y, Z).
 *
 * the rewrite (binding pattern "bf": first argument bound) gives
 *
 *   anc@bf(X, Y) :- m@anc@bf(X), parent(X, Y).
 *   anc@bf(X, Z) :- m@anc@bf(X), anc@bf(X, Y), parent(Y, Z).
 *   m@anc@bf(V0) :- s@anc@bf(V0).
 *
 * where the extensional "seed" s@anc@bf holds the goal's constants (the host
 * fills it per run, so one compiled plan serves every constant), m@anc@bf is
 * the demand ("magic") set and anc@bf the adorned predicate: only abe's
 * descendants are explored.  Names hold '@', which no source text can, so
 * they never clash with the user's predicates.
 *
 * Method (Bancilhon, Maier, Sagiv, Ullman; Beeri and Ramakrishnan):
 *  - each call of a derived predicate with some arguments bound (constants,
 *    or variables bound earlier in the body) uses an adorned copy p@α whose
 *    rules are guarded by the demand set m@p@α;
 *  - sideways information passing: the body is ordered greedily — filters
 *    and assignments as soon as their variables are bound, then the atom
 *    with the most bound arguments — and each call to an adorned predicate
 *    adds a magic rule whose body is the guard and the literals before it;
 *  - a call with nothing bound uses the original predicate, whose original
 *    rules are kept (evaluated whole);
 *  - aggregate results cannot be pushed into a body, so aggregate arguments
 *    are never bound; facts stay facts (an adorned relation may hold more
 *    true tuples than demanded; the goal filter runs after anyway).
 *
 * Negation and aggregation: the rewrite can create recursion through them
 * (demand flowing from a recursive caller into an aggregate below it).  The
 * rewritten dependency graph is checked; a predicate on such a cycle is
 * "frozen" — always called unadorned, computed whole — and the rewrite is
 * redone, until the program is stratified.  If the goal predicate itself
 * would have to be frozen, there is no rewrite and the caller runs the
 * original program.  So a rewritten program is stratified by construction,
 * and on the demanded bindings every adorned predicate is complete before
 * anything reads it (negatively or through an aggregate).
 *
 * Types: adorned and magic predicates are declared; integer arguments are
 * declared bigint (int and bigint share one encoding in the engine, and
 * demand may widen an int argument to bigint), others keep their type.
 */
#include "lang_int.h"

#include <string.h>

/* ------------------------------------------------------------ name map */


/* ------------------------------------------------------------- builder */

/* What a predicate of the rewritten program is (for the soundness check). */
typedef enum NodeKind
{
	NODE_ORIGINAL, NODE_ADORNED, NODE_MAGIC, NODE_SEED
} NodeKind;

/* One adorned predicate p@α. */
typedef struct Instance
{
	int			pred;			/* in the original analysis */
	char	   *pattern;		/* 'b'/'f' per argument */
	char	   *name;			/* p@α */
	char	   *mname;			/* m@p@α */
} Instance;

typedef struct Builder
{
	const GdlAnalysis *a;
	const bool *frozen;			/* per original pred: never adorned */
	const bool *const *bindable;	/* per pred, per argument */
	/* instances, a work list in creation order */
	int			ninst;
	int			capinst;
	Instance   *inst;
	GdlStrMap	instmap;		/* "pred/pattern" -> instance */
	bool	   *use_original;	/* per original pred: called unadorned */
	/* output */
	int			nitems;
	int			capitems;
	GdlItem    *items;
	int			nmagic_rules;
} Builder;

/* Append an item to the rewritten program. */
static void
add_item(Builder *b, GdlItemKind kind, GdlClause *c, GdlDecl *d, int64_t rule_id)
{
	GdlItem    *it;

	b->items = gdl_grow(b->items, b->nitems, &b->capitems, 32, sizeof(GdlItem));
	it = &b->items[b->nitems++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->clause = c;
	it->decl = d;
	it->rule_id = rule_id;
}

/* The adorned instance of (pred, pattern), created on first use. */
static Instance *
get_instance(Builder *b, int pred, const char *pattern)
{
	char	   *key = gdl_sprintf("%d/%s", pred, pattern);
	int			k = gdl_strmap_get(&b->instmap, key);
	Instance   *in;

	if (k >= 0)
		return &b->inst[k];
	b->inst = gdl_grow(b->inst, b->ninst, &b->capinst, 16, sizeof(Instance));
	k = b->ninst++;
	in = &b->inst[k];
	in->pred = pred;
	in->pattern = gdl_strdup(pattern);
	in->name = gdl_sprintf("%s@%s", b->a->preds[pred].name, pattern);
	in->mname = gdl_sprintf("m@%s@%s", b->a->preds[pred].name, pattern);
	gdl_strmap_put(&b->instmap, key, k);
	return in;
}

/* Is t a constant (no variable)? */
static bool
is_const(const GdlTerm *t)
{
	return gdl_term_const_type(t) != GDL_TYPE_UNKNOWN;
}

/* Do two argument terms denote the same variable or constant? */
static bool
same_term(const GdlTerm *x, const GdlTerm *y)
{
	if (x->kind != y->kind)
		return false;
	switch (x->kind)
	{
		case GDL_TERM_VAR:
			return x->var == y->var;
		case GDL_TERM_INT:
			return x->ival == y->ival;
		case GDL_TERM_FLOAT:
			return x->fval == y->fval;
		case GDL_TERM_BOOL:
			return x->bval == y->bval;
		case GDL_TERM_TEXT:
			return strcmp(x->text, y->text) == 0;
		default:
			return false;
	}
}

/* Are all variables of an expression bound (and no _ or aggregate in it)? */
static bool
expr_bound(const GdlTerm *t, const bool *bound)
{
	return gdl_term_bound(t, bound, false, false);
}

/* An atom with a new name and the given arguments. */
static GdlAtom
make_atom(const char *name, int nargs, GdlTerm **args, GdlLoc loc)
{
	GdlAtom		at;

	at.name = (char *) name;
	at.nargs = nargs;
	at.args = gdl_alloc(sizeof(GdlTerm *) * (nargs + 1));
	memcpy(at.args, args, sizeof(GdlTerm *) * nargs);
	at.loc = loc;
	return at;
}

/* A new clause over the variables of 'like' (names shared). */
static GdlClause *
make_clause(const GdlClause *like, GdlAtom head, int nbody, const GdlLiteral *body)
{
	GdlClause  *c = gdl_alloc(sizeof(GdlClause));

	c->head = head;
	c->nbody = nbody;
	c->body = gdl_alloc(sizeof(GdlLiteral) * (nbody + 1));
	memcpy(c->body, body, sizeof(GdlLiteral) * nbody);
	c->nvars = like->nvars;
	c->varnames = like->varnames;
	c->loc = like->loc;
	c->text = gdl_clause_to_string(c);
	return c;
}

/*
 * The binding pattern of an atom: 'b' where the argument is a constant or
 * a bound variable and the predicate may be bound there.  Returns false
 * when nothing is bound.
 */
static bool
atom_pattern(Builder *b, int pred, const GdlAtom *at, const bool *bound, char *pat)
{
	bool		any = false;
	int			k;

	for (k = 0; k < at->nargs; k++)
	{
		const GdlTerm *t = at->args[k];
		bool		isb = is_const(t) || (t->kind == GDL_TERM_VAR && bound[t->var]);

		pat[k] = (isb && b->bindable[pred][k]) ? 'b' : 'f';
		if (pat[k] == 'b')
			any = true;
	}
	pat[at->nargs] = '\0';
	return any;
}

/*
 * Rewrite one body atom (positive or negated) of a clause being adorned:
 * a call with bound arguments goes to the adorned predicate and adds a
 * magic rule "m@q@β(bound args) :- prefix"; any other call to a derived
 * predicate goes to the original.
 */
static void
rewrite_call(Builder *b, const GdlClause *c, GdlLiteral *lit, int pred, const bool *bound,
			 const GdlLiteral *prefix, int nprefix, const Instance *self)
{
	const GdlPred *q = &b->a->preds[pred];
	char	   *pat;
	Instance   *qi;
	GdlTerm   **margs;
	int			nm = 0;
	int			k;
	GdlAtom		mhead;

	if (q->is_edb)
		return;
	if (b->frozen[pred])
	{
		b->use_original[pred] = true;
		return;
	}
	pat = gdl_alloc(lit->atom.nargs + 1);
	if (!atom_pattern(b, pred, &lit->atom, bound, pat))
	{
		b->use_original[pred] = true;
		return;
	}
	qi = get_instance(b, pred, pat);
	margs = gdl_alloc(sizeof(GdlTerm *) * (lit->atom.nargs + 1));
	for (k = 0; k < lit->atom.nargs; k++)
		if (pat[k] == 'b')
			margs[nm++] = lit->atom.args[k];

	/* m@p@α(X) :- m@p@α(X) (a call passing the head's own bindings) adds nothing */
	if (!(nprefix == 1 && strcmp(qi->name, self->name) == 0 && prefix[0].atom.nargs == nm))
		goto emit;
	for (k = 0; k < nm; k++)
		if (!same_term(prefix[0].atom.args[k], margs[k]))
			goto emit;
	goto rename;

emit:
	mhead = make_atom(qi->mname, nm, margs, lit->atom.loc);
	add_item(b, GDL_ITEM_CLAUSE, make_clause(c, mhead, nprefix, prefix), NULL, 0);
	b->nmagic_rules++;
rename:
	lit->atom = make_atom(qi->name, lit->atom.nargs, lit->atom.args, lit->atom.loc);
}

/* Is a comparison, assignment or negated atom ready to place? */
static bool
filter_ready(const GdlClauseInfo *info, int l, bool *bound)
{
	const GdlLiteral *lit = &info->clause->body[l];
	int			k;

	if (lit->kind == GDL_LIT_NEG)
	{
		for (k = 0; k < lit->atom.nargs; k++)
			if (lit->atom.args[k]->kind == GDL_TERM_VAR && !bound[lit->atom.args[k]->var])
				return false;
		return true;
	}
	if (info->lit_assigns[l])
		return expr_bound(lit->rhs, bound);
	return expr_bound(lit->lhs, bound) && expr_bound(lit->rhs, bound);
}

/* Adorn one clause of instance 'in' (head predicate in->pred). */
static void
adorn_clause(Builder *b, const Instance *in, int ci)
{
	const GdlClauseInfo *info = &b->a->clauses[ci];
	const GdlClause *c = info->clause;
	int64_t		rule_id = b->a->prog->items[info->item].rule_id;
	GdlLiteral *out;
	int			nout = 0;
	bool	   *bound;
	bool	   *placed;
	GdlTerm   **gargs;
	int			ng = 0;
	int			k;
	int			l;
	GdlAtom		head;

	head = make_atom(in->name, c->head.nargs, c->head.args, c->head.loc);
	if (c->nbody == 0)
	{
		/* a fact is true whatever the demand */
		add_item(b, GDL_ITEM_CLAUSE, make_clause(c, head, 0, NULL), NULL, rule_id);
		return;
	}
	out = gdl_alloc(sizeof(GdlLiteral) * (c->nbody + 2));
	bound = gdl_alloc(sizeof(bool) * (c->nvars + 1));
	placed = gdl_alloc(sizeof(bool) * (c->nbody + 1));

	/* the guard: the demand on the head's bound arguments */
	gargs = gdl_alloc(sizeof(GdlTerm *) * (c->head.nargs + 1));
	for (k = 0; k < c->head.nargs; k++)
		if (in->pattern[k] == 'b')
		{
			const GdlTerm *t = c->head.args[k];

			gargs[ng++] = (GdlTerm *) t;
			if (t->kind == GDL_TERM_VAR)
				bound[t->var] = true;
		}
	memset(&out[0], 0, sizeof(GdlLiteral));
	out[0].kind = GDL_LIT_ATOM;
	out[0].atom = make_atom(in->mname, ng, gargs, c->head.loc);
	out[0].loc = c->head.loc;
	nout = 1;

	for (;;)
	{
		bool		progress = true;
		int			best = -1;
		int			best_score = -1;

		/* filters, assignments and negations as soon as they can run */
		while (progress)
		{
			progress = false;
			for (l = 0; l < c->nbody; l++)
			{
				if (placed[l] || c->body[l].kind == GDL_LIT_ATOM || !filter_ready(info, l, bound))
					continue;
				out[nout] = c->body[l];
				if (c->body[l].kind == GDL_LIT_NEG)
					rewrite_call(b, c, &out[nout], info->lit_pred[l], bound, out, nout, in);
				else if (info->lit_assigns[l])
					bound[c->body[l].lhs->var] = true;
				nout++;
				placed[l] = true;
				progress = true;
			}
		}
		/* then the positive atom with the most bound arguments */
		for (l = 0; l < c->nbody; l++)
		{
			int			score = 0;

			if (placed[l] || c->body[l].kind != GDL_LIT_ATOM)
				continue;
			for (k = 0; k < c->body[l].atom.nargs; k++)
			{
				const GdlTerm *t = c->body[l].atom.args[k];

				if (is_const(t) || (t->kind == GDL_TERM_VAR && bound[t->var]))
					score++;
			}
			if (score > best_score)
			{
				best = l;
				best_score = score;
			}
		}
		if (best < 0)
			break;
		out[nout] = c->body[best];
		rewrite_call(b, c, &out[nout], info->lit_pred[best], bound, out, nout, in);
		for (k = 0; k < c->body[best].atom.nargs; k++)
			if (c->body[best].atom.args[k]->kind == GDL_TERM_VAR)
				bound[c->body[best].atom.args[k]->var] = true;
		nout++;
		placed[best] = true;
	}
	/* a safe clause places everything above; keep any rest all the same */
	for (l = 0; l < c->nbody; l++)
		if (!placed[l])
			out[nout++] = c->body[l];
	add_item(b, GDL_ITEM_CLAUSE, make_clause(c, head, nout, out), NULL, rule_id);
}

/* The declared type of a rewritten argument: integers widen to bigint. */
static GdlType
decl_type(GdlType t)
{
	return t == GDL_TYPE_INT ? GDL_TYPE_BIGINT : t;
}

/* A declaration of 'name' with the given argument types. */
static GdlDecl *
make_decl(const char *name, int nargs, const GdlType *types, const GdlDecl *like)
{
	GdlDecl    *d = gdl_alloc(sizeof(GdlDecl));
	int			k;

	d->name = (char *) name;
	d->nargs = nargs;
	d->argnames = gdl_alloc(sizeof(char *) * (nargs + 1));
	d->types = gdl_alloc(sizeof(GdlType) * (nargs + 1));
	for (k = 0; k < nargs; k++)
	{
		d->argnames[k] = gdl_sprintf("a%d", k + 1);
		d->types[k] = decl_type(types[k]);
	}
	if (like && like->argnames && like->nargs == nargs)
		for (k = 0; k < nargs; k++)
			d->argnames[k] = like->argnames[k];
	d->text = gdl_decl_to_string(d);
	return d;
}

/*
 * Build the rewritten program for the current frozen set.  Returns false
 * when the goal itself cannot be adorned.
 */
static bool
build(Builder *b, int goal, const char *goal_pattern, GdlMagic *m)
{
	const GdlAnalysis *a = b->a;
	Instance   *gi;
	int			i;
	int			k;
	int		   *stack;
	int			sp = 0;
	bool	   *done;

	if (b->frozen[goal])
		return false;
	(void) get_instance(b, goal, goal_pattern);
	for (i = 0; i < b->ninst; i++)
	{
		/* copy: get_instance may move the array */
		Instance	in = b->inst[i];
		const GdlPred *p = &a->preds[in.pred];

		gdl_check_interrupts();
		for (k = 0; k < p->nclauses; k++)
			adorn_clause(b, &in, p->clauses[k]);
	}
	gi = &b->inst[0];

	/* the seed: demand for the goal comes from the host's constants */
	{
		GdlClause  *sc = gdl_alloc(sizeof(GdlClause));
		GdlTerm   **args = gdl_alloc(sizeof(GdlTerm *) * (m->nseed + 1));
		GdlLiteral *body = gdl_alloc(sizeof(GdlLiteral));

		sc->nvars = m->nseed;
		sc->varnames = gdl_alloc(sizeof(char *) * (m->nseed + 1));
		for (k = 0; k < m->nseed; k++)
		{
			args[k] = gdl_alloc(sizeof(GdlTerm));
			args[k]->kind = GDL_TERM_VAR;
			args[k]->var = k;
			sc->varnames[k] = gdl_sprintf("V%d", k);
		}
		sc->head = make_atom(gi->mname, m->nseed, args, a->preds[goal].first_use);
		body->kind = GDL_LIT_ATOM;
		body->atom = make_atom(m->seed_name, m->nseed, args, a->preds[goal].first_use);
		sc->nbody = 1;
		sc->body = body;
		sc->text = gdl_clause_to_string(sc);
		add_item(b, GDL_ITEM_CLAUSE, sc, NULL, 0);
	}

	/* declarations of adorned and demand predicates */
	for (i = 0; i < b->ninst; i++)
	{
		const Instance *in = &b->inst[i];
		const GdlPred *p = &a->preds[in->pred];
		GdlType    *mt = gdl_alloc(sizeof(GdlType) * (p->arity + 1));
		int			nm = 0;

		for (k = 0; k < p->arity; k++)
			if (in->pattern[k] == 'b')
				mt[nm++] = p->types[k];
		add_item(b, GDL_ITEM_DECL, NULL, make_decl(in->name, p->arity, p->types, p->decl), 0);
		add_item(b, GDL_ITEM_DECL, NULL, make_decl(in->mname, nm, mt, NULL), 0);
	}

	/* original predicates called unadorned, with everything they read */
	stack = gdl_alloc(sizeof(int) * (a->npreds + 1));
	done = gdl_alloc(sizeof(bool) * (a->npreds + 1));
	for (i = 0; i < a->npreds; i++)
		if (b->use_original[i] && !a->preds[i].is_edb)
		{
			done[i] = true;
			stack[sp++] = i;
		}
	while (sp > 0)
	{
		const GdlPred *p = &a->preds[stack[--sp]];

		if (p->decl)
			add_item(b, GDL_ITEM_DECL, NULL, p->decl, 0);
		for (k = 0; k < p->nclauses; k++)
		{
			const GdlClauseInfo *info = &a->clauses[p->clauses[k]];
			int			l;

			add_item(b, GDL_ITEM_CLAUSE, info->clause, NULL,
					 a->prog->items[info->item].rule_id);
			for (l = 0; l < info->clause->nbody; l++)
			{
				int			q = info->lit_pred[l];

				if (q >= 0 && !a->preds[q].is_edb && !done[q])
				{
					done[q] = true;
					stack[sp++] = q;
				}
			}
		}
	}
	return true;
}

/* ---------------------------------------------------- soundness check */

/* A dependency of the rewritten program. */
typedef struct MEdge
{
	int			from;
	int			to;
	bool		neg;			/* negated body atom */
	bool		agg;			/* the head aggregates */
} MEdge;

typedef struct MGraph
{
	int			n;
	int		   *origin;			/* original pred id, or -1 */
	NodeKind   *kind;
	int			nedges;
	MEdge	   *edges;
	int		   *first;			/* CSR offsets by 'from' */
	int		   *order;			/* edge indices sorted by 'from' */
	/* Tarjan */
	int		   *index;
	int		   *low;
	int		   *comp;
	bool	   *onstack;
	int		   *stack;
	int			sp;
	int			next;
	int			ncomp;
} MGraph;

/* Tarjan's strongly connected components from node v. */
static void
strong(MGraph *g, int v)
{
	int			e;

	g->index[v] = g->low[v] = g->next++;
	g->stack[g->sp++] = v;
	g->onstack[v] = true;
	for (e = g->first[v]; e < g->first[v + 1]; e++)
	{
		int			w = g->edges[g->order[e]].to;

		if (g->index[w] < 0)
		{
			strong(g, w);
			if (g->low[w] < g->low[v])
				g->low[v] = g->low[w];
		}
		else if (g->onstack[w] && g->index[w] < g->low[v])
			g->low[v] = g->index[w];
	}
	if (g->low[v] == g->index[v])
	{
		int			w;

		do
		{
			w = g->stack[--g->sp];
			g->onstack[w] = false;
			g->comp[w] = g->ncomp;
		} while (w != v);
		g->ncomp++;
	}
}

/*
 * Find recursion through negation or aggregation in the rewritten program
 * and freeze the predicates that cause it.  Returns the number frozen now.
 */
static int
freeze_unstratified(Builder *b, bool *frozen)
{
	MGraph		g;
	GdlStrMap	names = {0};
	int			i;
	int			k;
	int			capedges = 64;
	int			nfrozen = 0;

	memset(&g, 0, sizeof(g));
	g.origin = gdl_alloc(sizeof(int) * (b->nitems + 1));
	g.kind = gdl_alloc(sizeof(NodeKind) * (b->nitems + 1));
	for (i = 0; i < b->nitems; i++)
	{
		const char *name = gdl_item_head(&b->items[i]);

		if (gdl_strmap_get(&names, name) < 0)
		{
			g.origin[g.n] = -1;
			g.kind[g.n] = NODE_ORIGINAL;
			gdl_strmap_put(&names, name, g.n++);
		}
	}
	for (i = 0; i < b->ninst; i++)
	{
		int			v = gdl_strmap_get(&names, b->inst[i].name);

		g.origin[v] = b->inst[i].pred;
		g.kind[v] = NODE_ADORNED;
		v = gdl_strmap_get(&names, b->inst[i].mname);
		if (v >= 0)
			g.kind[v] = NODE_MAGIC;
	}
	g.edges = gdl_alloc(sizeof(MEdge) * capedges);
	for (i = 0; i < b->nitems; i++)
	{
		const GdlClause *c = b->items[i].clause;
		bool		agg = false;
		int			from;

		if (b->items[i].kind != GDL_ITEM_CLAUSE)
			continue;
		from = gdl_strmap_get(&names, c->head.name);
		for (k = 0; k < c->head.nargs; k++)
			if (c->head.args[k]->kind == GDL_TERM_AGG)
				agg = true;
		for (k = 0; k < c->nbody; k++)
		{
			int			to;

			if (c->body[k].kind == GDL_LIT_CMP)
				continue;
			to = gdl_strmap_get(&names, c->body[k].atom.name);
			if (to < 0)
				continue;		/* a table */
			if (g.nedges == capedges)
			{
				capedges *= 2;
				g.edges = gdl_realloc(g.edges, sizeof(MEdge) * capedges);
			}
			g.edges[g.nedges].from = from;
			g.edges[g.nedges].to = to;
			g.edges[g.nedges].neg = c->body[k].kind == GDL_LIT_NEG;
			g.edges[g.nedges].agg = agg;
			g.nedges++;
		}
	}
	/* CSR by 'from' */
	g.first = gdl_alloc(sizeof(int) * (g.n + 2));
	g.order = gdl_alloc(sizeof(int) * (g.nedges + 1));
	for (i = 0; i < g.nedges; i++)
		g.first[g.edges[i].from + 1]++;
	for (i = 0; i < g.n; i++)
		g.first[i + 1] += g.first[i];
	{
		int		   *pos = gdl_alloc(sizeof(int) * (g.n + 1));

		memcpy(pos, g.first, sizeof(int) * g.n);
		for (i = 0; i < g.nedges; i++)
			g.order[pos[g.edges[i].from]++] = i;
		gdl_free(pos);
	}
	g.index = gdl_alloc(sizeof(int) * (g.n + 1));
	g.low = gdl_alloc(sizeof(int) * (g.n + 1));
	g.comp = gdl_alloc(sizeof(int) * (g.n + 1));
	g.onstack = gdl_alloc(sizeof(bool) * (g.n + 1));
	g.stack = gdl_alloc(sizeof(int) * (g.n + 1));
	for (i = 0; i < g.n; i++)
		g.index[i] = -1;
	for (i = 0; i < g.n; i++)
		if (g.index[i] < 0)
			strong(&g, i);

	for (i = 0; i < g.nedges; i++)
	{
		const MEdge *e = &g.edges[i];
		int			culprit;

		if (!(e->neg || e->agg) || g.comp[e->from] != g.comp[e->to])
			continue;
		/* an aggregate head gives up its demand; a negated call its adornment */
		culprit = e->agg ? g.origin[e->from] : g.origin[e->to];
		if (culprit < 0)
			culprit = g.origin[e->from] >= 0 ? g.origin[e->from] : g.origin[e->to];
		if (culprit < 0)
			gdl_error(GDL_ERR_INTERNAL, NULL, NULL,
					  "magic-sets rewrite: a cycle through negation without an adorned predicate");
		if (!frozen[culprit])
		{
			frozen[culprit] = true;
			nfrozen++;
		}
	}
	return nfrozen;
}

/* ------------------------------------------------------------ entry points */

/*
 * Rewrite an analysed program for goal predicate 'goal_pred' with the
 * arguments flagged in 'bound' bound.  Returns NULL when the rewrite does
 * not apply: the goal is a table, is defined by facts only, binds nothing
 * that may be bound, or cannot be adorned soundly.
 */
GdlMagic *
gdl_magic_rewrite(const GdlAnalysis *a, int goal_pred, const bool *bound)
{
	const GdlPred *gp;
	bool	   *frozen;
	bool	  **bindable;
	char	   *pattern;
	GdlMagic   *m;
	int			i;
	int			k;
	int			rounds = 0;

	if (goal_pred < 0 || goal_pred >= a->npreds)
		gdl_error(GDL_ERR_PARAM, NULL, NULL, "goal predicate %d out of range", goal_pred);
	gp = &a->preds[goal_pred];
	if (gp->is_edb)
		return NULL;
	/* the rewrite names its predicates p@bf, m@p@bf, s@p@bf: a quoted name with '@' could clash */
	for (i = 0; i < a->npreds; i++)
		if (strchr(a->preds[i].name, '@') != NULL)
			return NULL;

	/* where may each predicate be bound, and which are not worth adorning */
	frozen = gdl_alloc(sizeof(bool) * (a->npreds + 1));
	bindable = gdl_alloc(sizeof(bool *) * (a->npreds + 1));
	for (i = 0; i < a->npreds; i++)
	{
		const GdlPred *p = &a->preds[i];
		bool		rules = false;

		bindable[i] = gdl_alloc(sizeof(bool) * (p->arity + 1));
		for (k = 0; k < p->arity; k++)
			bindable[i][k] = true;
		if (p->is_edb)
			continue;
		for (k = 0; k < p->nclauses; k++)
		{
			const GdlClause *c = a->clauses[p->clauses[k]].clause;
			int			j;

			if (c->nbody > 0)
				rules = true;
			for (j = 0; j < c->head.nargs && j < p->arity; j++)
				if (c->head.args[j]->kind != GDL_TERM_VAR && !is_const(c->head.args[j]))
					bindable[i][j] = false;
		}
		frozen[i] = !rules;
	}

	pattern = gdl_alloc(gp->arity + 1);
	m = gdl_alloc(sizeof(GdlMagic));
	m->seed_args = gdl_alloc(sizeof(int) * (gp->arity + 1));
	for (k = 0; k < gp->arity; k++)
	{
		pattern[k] = (bound[k] && bindable[goal_pred][k]) ? 'b' : 'f';
		if (pattern[k] == 'b')
			m->seed_args[m->nseed++] = k;
	}
	if (m->nseed == 0)
		return NULL;
	m->pattern = pattern;
	m->goal_pred = goal_pred;
	m->seed_name = gdl_sprintf("s@%s@%s", gp->name, pattern);

	for (;;)
	{
		Builder		b;

		gdl_check_interrupts();
		memset(&b, 0, sizeof(b));
		b.a = a;
		b.frozen = frozen;
		b.bindable = (const bool *const *) bindable;
		b.use_original = gdl_alloc(sizeof(bool) * (a->npreds + 1));
		if (!build(&b, goal_pred, pattern, m))
			return NULL;
		if (freeze_unstratified(&b, frozen) > 0)
		{
			rounds++;
			continue;
		}
		m->prog = gdl_alloc(sizeof(GdlProgram));
		m->prog->nitems = b.nitems;
		m->prog->items = b.items;
		m->goal_name = b.inst[0].name;
		m->nadorned = b.ninst;
		m->nmagic_rules = b.nmagic_rules;
		for (i = 0; i < a->npreds; i++)
			if (frozen[i] && !a->preds[i].is_edb)
			{
				bool		rules = false;

				for (k = 0; k < a->preds[i].nclauses; k++)
					if (a->clauses[a->preds[i].clauses[k]].clause->nbody > 0)
						rules = true;
				if (rules)
					m->nfrozen++;
			}
		gdl_log("magic-sets rewrite of %s: %d adorned, %d magic rules, %d frozen (%d rounds)",
				m->goal_name, m->nadorned, m->nmagic_rules, m->nfrozen, rounds);
		return m;
	}
}

/* The resolver of a rewritten program: the original's tables and the seed. */
typedef struct MagicResolve
{
	const GdlAnalysis *a;
	const GdlMagic *m;
} MagicResolve;

/* Resolve a table of the rewritten program without asking the host. */
static bool
magic_resolve(void *arg, const char *name, GdlRelInfo *out)
{
	MagicResolve *r = arg;
	int			p;
	int			k;

	if (strcmp(name, r->m->seed_name) == 0)
	{
		const GdlPred *gp = &r->a->preds[r->m->goal_pred];

		memset(out, 0, sizeof(*out));
		out->relid = 0;
		out->display_name = gdl_strdup("goal constants");
		out->ncols = r->m->nseed;
		out->types = gdl_alloc(sizeof(GdlType) * (r->m->nseed + 1));
		out->colnames = gdl_alloc(sizeof(char *) * (r->m->nseed + 1));
		out->typnames = gdl_alloc(sizeof(char *) * (r->m->nseed + 1));
		for (k = 0; k < r->m->nseed; k++)
		{
			out->types[k] = decl_type(gp->types[r->m->seed_args[k]]);
			out->colnames[k] = gdl_sprintf("a%d", r->m->seed_args[k] + 1);
			out->typnames[k] = (char *) gdl_type_name(out->types[k]);
		}
		return true;
	}
	p = gdl_analysis_find_pred(r->a, name);
	if (p < 0 || !r->a->preds[p].is_edb)
		return false;
	*out = r->a->preds[p].rel;
	return true;
}

/*
 * Analyse a rewritten program: its tables are those of the original
 * analysis 'a' (no host look-up), plus the seed.
 */
GdlAnalysis *
gdl_magic_analyze(const GdlAnalysis *a, const GdlMagic *m)
{
	MagicResolve r;

	r.a = a;
	r.m = m;
	return gdl_analyze(m->prog, magic_resolve, &r);
}
