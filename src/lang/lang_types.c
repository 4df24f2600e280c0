/*
 * lang_types.c — type inference and checking.  Argument types of derived
 * predicates are found by a fixpoint over the clauses: table columns,
 * declarations and constants give types, variables carry them between atoms,
 * and a head argument's type joins into its predicate's.  int and bigint
 * widen to bigint; an integer constant fits int, bigint or float8 until
 * something decides; any other mix is an error naming predicate and argument.
 */
#include "lang_int.h"

#include <string.h>

/* Where a variable's type came from: an atom argument or an assignment. */
typedef struct Why
{
	const char *pred;			/* argument 'argno' of this predicate, or NULL */
	int			argno;
	GdlLoc		loc;			/* the assignment, when pred is NULL */
} Why;

typedef struct TypeState
{
	GdlAnalysis *a;
	int		  **ptype;			/* per pred, per argument: internal type */
	char	 ***pwhy;			/* per pred, per argument: where it came from */
	bool		changed;
	int		   *vt;				/* scratch for ClauseTypes, sized for any clause */
	Why		   *why;
} TypeState;

/* Per-clause inference scratch. */
typedef struct ClauseTypes
{
	TypeState  *ts;
	GdlClauseInfo *info;
	GdlClause  *c;
	int		   *vt;				/* per variable: internal type */
	Why		   *why;			/* per variable: where the type came from */
	bool		final;
} ClauseTypes;

/* Is t an integer type or integer literal? */
static bool
is_intlike(int t)
{
	return t == GDL_TYPE_INT || t == GDL_TYPE_BIGINT ||
		t == GDL_ITYPE_ILIT || t == GDL_ITYPE_BLIT;
}

/*
 * Least common type of a and b, or GDL_ITYPE_CONFLICT.  Integer literals
 * give way to int, bigint and float8; int and bigint widen to bigint.
 */
int
gdl_itype_join(int a, int b)
{
	if (a == b)
		return a;
	if (a == GDL_ITYPE_CONFLICT || b == GDL_ITYPE_CONFLICT)
		return GDL_ITYPE_CONFLICT;
	if (a == GDL_TYPE_UNKNOWN)
		return b;
	if (b == GDL_TYPE_UNKNOWN)
		return a;
	if (b == GDL_ITYPE_ILIT || b == GDL_ITYPE_BLIT)
	{
		int			tmp = a;

		a = b;
		b = tmp;
	}
	if (a == GDL_ITYPE_ILIT || a == GDL_ITYPE_BLIT)
	{
		if (b == GDL_ITYPE_ILIT || b == GDL_ITYPE_BLIT)
			return GDL_ITYPE_BLIT;
		if (b == GDL_TYPE_FLOAT8 || b == GDL_TYPE_BIGINT)
			return b;
		if (b == GDL_TYPE_INT)
			return a == GDL_ITYPE_ILIT ? GDL_TYPE_INT : GDL_TYPE_BIGINT;
		return GDL_ITYPE_CONFLICT;
	}
	if ((a == GDL_TYPE_INT && b == GDL_TYPE_BIGINT) ||
		(a == GDL_TYPE_BIGINT && b == GDL_TYPE_INT))
		return GDL_TYPE_BIGINT;
	return GDL_ITYPE_CONFLICT;
}

/* The public type an internal type settles on. */
GdlType
gdl_itype_resolve(int t)
{
	if (t == GDL_ITYPE_ILIT)
		return GDL_TYPE_INT;
	if (t == GDL_ITYPE_BLIT)
		return GDL_TYPE_BIGINT;
	if (t < 0)
		return GDL_TYPE_UNKNOWN;
	return (GdlType) t;
}

/* Name of an internal type for messages. */
const char *
gdl_itype_name(int t)
{
	if (t == GDL_ITYPE_ILIT || t == GDL_ITYPE_BLIT)
		return "integer";
	return gdl_type_name(gdl_itype_resolve(t));
}

/* The type of a constant leaf; see gdl_lang.h. */
GdlType
gdl_term_const_type(const GdlTerm *t)
{
	switch (t->kind)
	{
		case GDL_TERM_INT:
			return GDL_TYPE_BIGINT;
		case GDL_TERM_FLOAT:
			return GDL_TYPE_FLOAT8;
		case GDL_TERM_TEXT:
			return GDL_TYPE_TEXT;
		case GDL_TERM_BOOL:
			return GDL_TYPE_BOOL;
		default:
			return GDL_TYPE_UNKNOWN;
	}
}

/*
 * The internal type of a constant term (UNKNOWN for anything else): an
 * integer literal stays open between int and bigint (by its value).
 */
static int
literal_type(const GdlTerm *t)
{
	if (t->kind == GDL_TERM_INT)
		return (t->ival >= INT32_MIN && t->ival <= INT32_MAX) ?
			GDL_ITYPE_ILIT : GDL_ITYPE_BLIT;
	return gdl_term_const_type(t);
}

/* Raise a type error about clause c. */
static void
type_error(const GdlClause *c, const char *hint, const char *msg)
	__attribute__((noreturn));
static void
type_error(const GdlClause *c, const char *hint, const char *msg)
{
	gdl_error(GDL_ERR_DATATYPE,
			  gdl_sprintf("%s: %s", c->nbody > 0 ? "rule" : "fact", gdl_clause_to_string(c)),
			  hint, "%s", msg);
}

/* Hint for a bare lower-case constant that was probably meant as a variable. */
static const char *
symbol_hint(const GdlTerm *t)
{
	if (t->kind == GDL_TERM_TEXT && !t->quoted)
		return gdl_sprintf("%s is a text constant; variables start with an upper-case letter or _",
						   t->text);
	return NULL;
}

/* Describe a Why for messages. */
static char *
why_string(const Why *w)
{
	if (w->pred)
		return gdl_sprintf("argument %d of \"%s\"", w->argno + 1, w->pred);
	return gdl_sprintf("the assignment at line %d, column %d", w->loc.line, w->loc.col);
}

/* Join type t (from 'why') into variable v of the clause. */
static void
unify_var(ClauseTypes *ct, int v, int t, Why why)
{
	int			old = ct->vt[v];
	int			nt = gdl_itype_join(old, t);

	if (t == GDL_TYPE_UNKNOWN)
		return;
	if (nt == GDL_ITYPE_CONFLICT)
		type_error(ct->c, "a variable has one type in all of its occurrences",
				   gdl_sprintf("type mismatch for variable %s in %s: %s from %s, but %s from %s",
							   ct->c->varnames[v], gdl_clause_where(ct->c),
							   gdl_itype_name(old), why_string(&ct->why[v]), gdl_itype_name(t),
							   why_string(&why)));
	if (nt != old)
	{
		ct->vt[v] = nt;
		ct->why[v] = why;
	}
}

/* The type of an expression; checks that arithmetic is on integers. */
static int
expr_type(ClauseTypes *ct, const GdlTerm *t)
{
	int			res;
	const GdlTerm *ops[2];
	int			i;
	bool		unknown = false;

	switch (t->kind)
	{
		case GDL_TERM_VAR:
			return ct->vt[t->var];
		case GDL_TERM_BINOP:
		case GDL_TERM_NEG:
			ops[0] = t->left;
			ops[1] = t->kind == GDL_TERM_BINOP ? t->right : NULL;
			res = GDL_TYPE_UNKNOWN;
			for (i = 0; i < 2 && ops[i]; i++)
			{
				int			ot = expr_type(ct, ops[i]);

				if (ot != GDL_TYPE_UNKNOWN && !is_intlike(ot))
					type_error(ct->c, "arithmetic works on int and bigint values",
							   gdl_sprintf("type mismatch in %s: arithmetic on %s, which is %s",
										   gdl_clause_where(ct->c),
										   gdl_term_to_string(ct->c, ops[i]),
										   gdl_itype_name(ot)));
				if (ot == GDL_TYPE_UNKNOWN)
					unknown = true;
				if (ot == GDL_TYPE_BIGINT || ot == GDL_ITYPE_BLIT || res == GDL_TYPE_BIGINT)
					res = GDL_TYPE_BIGINT;
				else if (ot == GDL_TYPE_INT || res == GDL_TYPE_INT)
					res = GDL_TYPE_INT;
				else if (ot == GDL_ITYPE_ILIT || res == GDL_ITYPE_ILIT)
					res = GDL_ITYPE_ILIT;
			}
			/* wait for unknown operands unless bigint is already certain */
			if (unknown && res != GDL_TYPE_BIGINT)
				return GDL_TYPE_UNKNOWN;
			/* arithmetic on constants alone is bigint */
			if (res == GDL_ITYPE_ILIT)
				res = GDL_TYPE_BIGINT;
			return res;
		default:
			return literal_type(t);
	}
}

/* Types from the arguments of a body atom (positive or negated). */
static void
infer_atom(ClauseTypes *ct, const GdlAtom *atom, int pid)
{
	GdlPred    *pred = &ct->ts->a->preds[pid];
	int			j;

	for (j = 0; j < atom->nargs; j++)
	{
		const GdlTerm *t = atom->args[j];
		int			pt = ct->ts->ptype[pid][j];

		if (t->kind == GDL_TERM_VAR)
		{
			if (pt != GDL_TYPE_UNKNOWN)
			{
				Why			w = {pred->name, j, atom->loc};

				unify_var(ct, t->var, pt, w);
			}
		}
		else if (t->kind != GDL_TERM_ANON && pt != GDL_TYPE_UNKNOWN &&
				 gdl_itype_join(pt, literal_type(t)) == GDL_ITYPE_CONFLICT)
			type_error(ct->c, symbol_hint(t),
					   gdl_sprintf("type mismatch in %s: constant %s is %s, but argument %d of \"%s\" is %s",
								   gdl_clause_where(ct->c), gdl_term_to_string(ct->c, t),
								   gdl_itype_name(literal_type(t)), j + 1, pred->name,
								   gdl_itype_name(pt)));
	}
}

/* The type a head argument produces. */
static int
head_arg_type(ClauseTypes *ct, const GdlTerm *t)
{
	int			vt;

	if (t->kind != GDL_TERM_AGG)
		return expr_type(ct, t);
	vt = ct->vt[t->arg->var];
	switch (t->agg)
	{
		case GDL_AGG_COUNT:
			return GDL_TYPE_BIGINT;
		case GDL_AGG_SUM:
			if (vt == GDL_TYPE_UNKNOWN)
				return vt;
			if (is_intlike(vt))
				return GDL_TYPE_BIGINT;
			if (vt == GDL_TYPE_FLOAT8)
				return vt;
			type_error(ct->c, "sum works on int, bigint and float8 values",
					   gdl_sprintf("type mismatch in %s: sum(%s) of a %s value",
								   gdl_clause_where(ct->c), ct->c->varnames[t->arg->var],
								   gdl_itype_name(vt)));
		default:
			return vt;
	}
}

/* Join a head argument's type into its predicate (or check the declaration). */
static void
join_head(ClauseTypes *ct, int pid, int j, const GdlTerm *arg, int t)
{
	GdlPred    *pred = &ct->ts->a->preds[pid];
	int			old = ct->ts->ptype[pid][j];
	int			nt;
	char	   *what;

	if (t == GDL_TYPE_UNKNOWN)
		return;
	nt = gdl_itype_join(old, t);
	if (nt == old)
		return;
	what = arg->kind == GDL_TERM_VAR ?
		gdl_sprintf("%s (variable %s)", gdl_clause_where(ct->c), ct->c->varnames[arg->var]) :
		gdl_sprintf("%s (%s)", gdl_clause_where(ct->c), gdl_term_to_string(ct->c, arg));
	if (pred->decl)
	{
		type_error(ct->c,
				   nt == GDL_TYPE_BIGINT ?
				   "declare the argument as bigint, or keep the values within int" :
				   symbol_hint(arg) ? symbol_hint(arg) : "a declared type cannot change",
				   gdl_sprintf("type mismatch for argument %d of predicate \"%s\": declared %s, but %s gives %s",
							   j + 1, pred->name, gdl_itype_name(old), what, gdl_itype_name(t)));
	}
	if (nt == GDL_ITYPE_CONFLICT)
		type_error(ct->c, symbol_hint(arg) ? symbol_hint(arg) :
				   "an argument has one type in every clause; .decl fixes it",
				   gdl_sprintf("type mismatch for argument %d of predicate \"%s\": %s from %s, but %s from %s",
							   j + 1, pred->name, gdl_itype_name(old), ct->ts->pwhy[pid][j],
							   gdl_itype_name(t), what));
	ct->ts->ptype[pid][j] = nt;
	ct->ts->pwhy[pid][j] = what;
	ct->ts->changed = true;
}

/* Check that the two sides of a comparison can be compared. */
static void
check_compare(ClauseTypes *ct, const GdlLiteral *l)
{
	int			lt = expr_type(ct, l->lhs);
	int			rt = expr_type(ct, l->rhs);

	if (lt == GDL_TYPE_UNKNOWN || rt == GDL_TYPE_UNKNOWN ||
		gdl_itype_join(lt, rt) != GDL_ITYPE_CONFLICT)
		return;
	type_error(ct->c, symbol_hint(l->lhs) ? symbol_hint(l->lhs) : symbol_hint(l->rhs),
			   gdl_sprintf("type mismatch in %s: cannot compare %s (%s) with %s (%s)",
						   gdl_clause_where(ct->c), gdl_term_to_string(ct->c, l->lhs),
						   gdl_itype_name(lt), gdl_term_to_string(ct->c, l->rhs),
						   gdl_itype_name(rt)));
}

/*
 * Infer the variable types of one clause from the current predicate types,
 * then join its head's argument types into the head predicate.  In the
 * final round also check comparisons and store var_types.
 */
static void
infer_clause(TypeState *ts, GdlClauseInfo *info, bool final)
{
	ClauseTypes ct;
	GdlClause  *c = info->clause;
	bool		changed;
	int			i;

	ct.ts = ts;
	ct.info = info;
	ct.c = c;
	ct.final = final;
	ct.vt = ts->vt;
	ct.why = ts->why;
	memset(ct.vt, 0, sizeof(int) * (c->nvars + 1));
	memset(ct.why, 0, sizeof(Why) * (c->nvars + 1));

	for (i = 0; i < c->nbody; i++)
		if (c->body[i].kind != GDL_LIT_CMP)
			infer_atom(&ct, &c->body[i].atom, info->lit_pred[i]);
	do
	{
		changed = false;
		for (i = 0; i < c->nbody; i++)
		{
			GdlLiteral *l = &c->body[i];
			int			before;
			Why			w = {NULL, 0, l->loc};

			if (!info->lit_assigns[i])
				continue;
			before = ct.vt[l->lhs->var];
			unify_var(&ct, l->lhs->var, expr_type(&ct, l->rhs), w);
			if (ct.vt[l->lhs->var] != before)
				changed = true;
		}
	} while (changed);

	for (i = 0; i < c->head.nargs; i++)
		join_head(&ct, info->head_pred, i, c->head.args[i], head_arg_type(&ct, c->head.args[i]));

	if (!final)
		return;
	for (i = 0; i < c->nbody; i++)
		if (c->body[i].kind == GDL_LIT_CMP)
		{
			if (!info->lit_assigns[i])
				check_compare(&ct, &c->body[i]);
			else
				(void) expr_type(&ct, c->body[i].rhs);	/* checks arithmetic */
		}
	for (i = 0; i < c->nvars; i++)
	{
		GdlType		t = gdl_itype_resolve(ct.vt[i]);

		/* only a variable unused by any atom can stay unknown: arithmetic */
		info->var_types[i] = t == GDL_TYPE_UNKNOWN ? GDL_TYPE_BIGINT : t;
	}
}

/* Run type inference over the analysis; fills pred types and var_types. */
void
gdl_lang_types(GdlAnalysis *a)
{
	TypeState	ts;
	int			i;
	int			j;
	int			rounds = 0;
	int			maxvars = 0;

	memset(&ts, 0, sizeof(ts));
	ts.a = a;
	for (i = 0; i < a->nclauses; i++)
		if (a->clauses[i].clause->nvars > maxvars)
			maxvars = a->clauses[i].clause->nvars;
	ts.vt = gdl_alloc(sizeof(int) * (maxvars + 1));
	ts.why = gdl_alloc(sizeof(Why) * (maxvars + 1));
	ts.ptype = gdl_alloc(sizeof(int *) * (a->npreds + 1));
	ts.pwhy = gdl_alloc(sizeof(char **) * (a->npreds + 1));
	for (i = 0; i < a->npreds; i++)
	{
		GdlPred    *p = &a->preds[i];

		ts.ptype[i] = gdl_alloc(sizeof(int) * (p->arity + 1));
		ts.pwhy[i] = gdl_alloc(sizeof(char *) * (p->arity + 1));
		for (j = 0; j < p->arity; j++)
		{
			if (p->is_edb)
			{
				ts.ptype[i][j] = p->rel.types[j];
				ts.pwhy[i][j] = gdl_sprintf("column %d of table %s", j + 1, p->rel.display_name);
			}
			else if (p->decl)
			{
				ts.ptype[i][j] = p->decl->types[j];
				ts.pwhy[i][j] = gdl_sprintf("the declaration at line %d", p->decl->loc.line);
			}
		}
	}

	/* fixpoint: types only move up a finite lattice, so this ends */
	do
	{
		ts.changed = false;
		for (i = 0; i < a->nclauses; i++)
		{
			gdl_check_interrupts();
			infer_clause(&ts, &a->clauses[i], false);
		}
		rounds++;
	} while (ts.changed);
	gdl_log("type inference: %d rounds", rounds);

	for (i = 0; i < a->npreds; i++)
	{
		GdlPred    *p = &a->preds[i];

		if (p->is_edb)
			continue;
		for (j = 0; j < p->arity; j++)
		{
			if (ts.ptype[i][j] == GDL_TYPE_UNKNOWN)
				gdl_error(GDL_ERR_DATATYPE, NULL,
						  gdl_sprintf("declare it, e.g. .decl %s(...: int, ...), or add a rule "
									  "that derives it from a table or constants", gdl_pred_name_quote(p->name)),
						  "cannot infer the type of argument %d of predicate \"%s\": "
						  "no rule gives it a value from a table, a constant or a declaration",
						  j + 1, p->name);
			ts.ptype[i][j] = gdl_itype_resolve(ts.ptype[i][j]);
			p->types[j] = (GdlType) ts.ptype[i][j];
		}
	}
	for (i = 0; i < a->nclauses; i++)
		infer_clause(&ts, &a->clauses[i], true);
}
