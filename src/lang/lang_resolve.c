/*
 * lang_resolve.c — the first analysis pass: find every predicate, decide
 * whether it is intensional (heads a clause or is declared) or extensional
 * (read from a table the host resolves), and check arities and the columns
 * extensional atoms use.  Predicates get ids in order of first appearance.
 */
#include "lang_int.h"

#include <string.h>


typedef struct ResolveState
{
	GdlAnalysis *a;
	GdlResolveFn resolve;
	void	   *resolve_arg;
	GdlStrMap		idb;			/* names that head a clause or are declared */
	GdlStrMap		preds;			/* name -> pred id */
	int			predcap;
	int		   *clausecap;		/* per pred: capacity of pred->clauses */
	int		   *arity_from;		/* per pred: ARITY_* */
	GdlLoc	   *arity_loc;		/* per pred: where the arity was fixed */
} ResolveState;

#define ARITY_UNSET	0
#define ARITY_USE	1
#define ARITY_DECL	2
#define ARITY_TABLE	3


/* "rule at line 3" or "fact at line 3", for messages. */
char *
gdl_clause_where(const GdlClause *c)
{
	return gdl_sprintf("%s at line %d", c->nbody > 0 ? "rule" : "fact", c->loc.line);
}

/* Detail line quoting a clause: "rule: <its canonical text>". */
static char *
clause_detail(const GdlClause *c)
{
	return gdl_sprintf("%s: %s", c->nbody > 0 ? "rule" : "fact", gdl_clause_to_string(c));
}

/* name as the body of an SQL string literal: each ' doubled (for hints). */
static char *
sql_literal_body(const char *name)
{
	size_t		n = strlen(name),
				i,
				j = 0;
	char	   *out = gdl_alloc(2 * n + 1);

	for (i = 0; i < n; i++)
	{
		if (name[i] == '\'')
			out[j++] = '\'';
		out[j++] = name[i];
	}
	out[j] = '\0';
	return out;
}

/* Resolve an extensional predicate through the host, or raise UNDEFINED. */
static void
resolve_edb(ResolveState *st, GdlPred *pred, const GdlClause *c, GdlLoc loc)
{
	GdlRelInfo	rel;
	int			i;

	memset(&rel, 0, sizeof(rel));
	if (st->resolve == NULL || !st->resolve(st->resolve_arg, pred->name, &rel))
		gdl_error(GDL_ERR_UNDEFINED,
				  gdl_sprintf("used at line %d, column %d in %s", loc.line, loc.col,
							  clause_detail(c)),
				  gdl_sprintf("define \"%s\" with a rule or fact, create the table, "
							  "bind it with gpudl_bind(program, '%s', 'schema.table'), "
							  "or check search_path", pred->name, sql_literal_body(pred->name)),
				  "predicate \"%s\" is not defined by any rule and no table \"%s\" exists",
				  pred->name, pred->name);
	if (rel.display_name == NULL)
		rel.display_name = pred->name;
	if (rel.ncols < 0)
		rel.ncols = 0;
	if (rel.types == NULL)
		rel.types = gdl_alloc(sizeof(GdlType) * (rel.ncols + 1));
	pred->is_edb = true;
	pred->rel = rel;
	pred->arity = rel.ncols;
	pred->types = gdl_alloc(sizeof(GdlType) * (rel.ncols + 1));
	for (i = 0; i < rel.ncols; i++)
		pred->types[i] = rel.types[i];
	pred->stratum = -1;
}

/* The id of a predicate, created (and resolved when extensional) on first use. */
static int
get_pred(ResolveState *st, const char *name, GdlLoc loc, const GdlClause *c)
{
	GdlAnalysis *a = st->a;
	int			id = gdl_strmap_get(&st->preds, name);
	GdlPred    *pred;

	if (id >= 0)
		return id;
	if (a->npreds == st->predcap)
	{
		st->predcap = st->predcap ? st->predcap * 2 : 16;
		a->preds = gdl_realloc(a->preds, sizeof(GdlPred) * st->predcap);
		st->clausecap = gdl_realloc(st->clausecap, sizeof(int) * st->predcap);
		st->arity_from = gdl_realloc(st->arity_from, sizeof(int) * st->predcap);
		st->arity_loc = gdl_realloc(st->arity_loc, sizeof(GdlLoc) * st->predcap);
	}
	id = a->npreds++;
	pred = &a->preds[id];
	memset(pred, 0, sizeof(*pred));
	st->clausecap[id] = 0;
	st->arity_from[id] = ARITY_UNSET;
	pred->id = id;
	pred->name = gdl_strdup(name);
	pred->arity = -1;
	pred->first_use = loc;
	pred->stratum = -1;
	gdl_strmap_put(&st->preds, pred->name, id);
	if (gdl_strmap_get(&st->idb, name) < 0)
	{
		resolve_edb(st, pred, c, loc);
		pred = &a->preds[id];
		st->arity_from[id] = ARITY_TABLE;
		st->arity_loc[id] = loc;
	}
	return id;
}

/* Describe where a predicate's arity was fixed, for a mismatch message. */
static char *
arity_origin(ResolveState *st, const GdlPred *pred)
{
	GdlLoc		l = st->arity_loc[pred->id];

	switch (st->arity_from[pred->id])
	{
		case ARITY_TABLE:
			return gdl_sprintf("table %s has %d column%s", pred->rel.display_name,
							   pred->arity, pred->arity == 1 ? "" : "s");
		case ARITY_DECL:
			return gdl_sprintf("it is declared with %d argument%s at line %d",
							   pred->arity, pred->arity == 1 ? "" : "s", l.line);
		default:
			return gdl_sprintf("it is used with %d argument%s at line %d, column %d",
							   pred->arity, pred->arity == 1 ? "" : "s", l.line, l.col);
	}
}

/*
 * Check one use of a predicate (n arguments at loc) against its arity, or
 * fix the arity on first use.  'how' is ARITY_USE or ARITY_DECL; the use
 * is in clause c or declaration d (for the message).
 */
static void
check_arity(ResolveState *st, int id, int n, GdlLoc loc, int how,
			const GdlClause *c, const GdlDecl *d)
{
	GdlPred    *pred = &st->a->preds[id];

	if (st->arity_from[id] == ARITY_UNSET)
	{
		pred->arity = n;
		st->arity_from[id] = how;
		st->arity_loc[id] = loc;
		return;
	}
	if (pred->arity == n)
	{
		/* a declaration is the better origin to quote later */
		if (how == ARITY_DECL && st->arity_from[id] == ARITY_USE)
		{
			st->arity_from[id] = how;
			st->arity_loc[id] = loc;
		}
		return;
	}
	gdl_error(GDL_ERR_DATATYPE, c ? clause_detail(c) : d->text,
			  st->arity_from[id] == ARITY_TABLE ?
			  "give one argument per column of the table, in column order; use _ for columns you do not need" :
			  "a predicate has the same number of arguments everywhere",
			  "arity mismatch for predicate \"%s\": %s with %d argument%s at line %d, column %d, but %s",
			  pred->name, how == ARITY_DECL ? "declared" : "used", n, n == 1 ? "" : "s",
			  loc.line, loc.col, arity_origin(st, pred));
}

/* Reject extensional columns of unsupported type that an atom really uses. */
static void
check_edb_columns(ResolveState *st, const GdlPred *pred, const GdlAtom *atom,
				  const GdlClause *c)
{
	int			i;

	for (i = 0; i < atom->nargs && i < pred->arity; i++)
	{
		if (pred->rel.types[i] != GDL_TYPE_UNKNOWN || atom->args[i]->kind == GDL_TERM_ANON)
			continue;
		gdl_error(GDL_ERR_DATATYPE,
				  gdl_sprintf("used as argument %d of \"%s\" at line %d, column %d in %s",
							  i + 1, pred->name, atom->args[i]->loc.line,
							  atom->args[i]->loc.col, clause_detail(c)),
				  "write _ for this argument, or bind the predicate to a view that casts "
				  "the column to int, bigint, text, bool or float8",
				  "column \"%s\" of table %s has unsupported type %s",
				  pred->rel.colnames && pred->rel.colnames[i] ? pred->rel.colnames[i] :
				  gdl_sprintf("%d", i + 1),
				  pred->rel.display_name,
				  pred->rel.typnames && pred->rel.typnames[i] ? pred->rel.typnames[i] : "unknown");
	}
}

/* Append clause index ci to a predicate's defining clauses. */
static void
add_defining_clause(ResolveState *st, int id, int ci)
{
	GdlPred    *pred = &st->a->preds[id];

	if (pred->nclauses == st->clausecap[id])
	{
		st->clausecap[id] = st->clausecap[id] ? st->clausecap[id] * 2 : 4;
		pred->clauses = gdl_realloc(pred->clauses, sizeof(int) * st->clausecap[id]);
	}
	pred->clauses[pred->nclauses++] = ci;
}

/*
 * Pass 1: collect intensional names; reject qualified heads and double decls.
 * A head is schema-qualified when it reads as schema.name (two identifiers
 * joined by '.'); other names with a dot ("/a/b./c/d", quoted) are names.
 */
static void
collect_idb(ResolveState *st, GdlProgram *prog)
{
	GdlStrMap		decls = {0};
	int			i;

	for (i = 0; i < prog->nitems; i++)
	{
		GdlItem    *item = &prog->items[i];
		const char *name = gdl_item_head(item);
		GdlLoc		loc = item->kind == GDL_ITEM_DECL ? item->decl->loc : item->clause->loc;

		if (strchr(name, '.') != NULL && !gdl_name_needs_quotes(name))
			gdl_error(GDL_ERR_SYNTAX,
					  item->kind == GDL_ITEM_DECL ? item->decl->text : item->clause->text,
					  "derived predicates are not schema-qualified; rules and facts are stored "
					  "in the program, not in tables (use gpudl_materialize to write a table)",
					  "schema-qualified predicate \"%s\" cannot be defined by a %s (line %d)",
					  name, item->kind == GDL_ITEM_DECL ? "declaration" : "rule or fact",
					  loc.line);
		if (item->kind == GDL_ITEM_DECL)
		{
			int			prev = gdl_strmap_get(&decls, name);

			if (prev >= 0)
				gdl_error(GDL_ERR_DATATYPE, item->decl->text,
						  "declare each predicate once",
						  "predicate \"%s\" is declared more than once (lines %d and %d)",
						  name, prog->items[prev].decl->loc.line, loc.line);
			gdl_strmap_put(&decls, name, i);
		}
		gdl_strmap_put(&st->idb, name, 1);
	}
}

/*
 * Pass 2: create predicates in order of first appearance, build the
 * per-clause infos, and check arities.
 */
void
gdl_lang_resolve(GdlAnalysis *a, GdlResolveFn resolve, void *arg)
{
	ResolveState st;
	GdlProgram *prog = a->prog;
	int			i;
	int			j;
	int			ci = 0;

	memset(&st, 0, sizeof(st));
	st.a = a;
	st.resolve = resolve;
	st.resolve_arg = arg;
	collect_idb(&st, prog);

	for (i = 0; i < prog->nitems; i++)
		if (prog->items[i].kind == GDL_ITEM_CLAUSE)
			a->nclauses++;
	a->clauses = gdl_alloc(sizeof(GdlClauseInfo) * (a->nclauses + 1));

	for (i = 0; i < prog->nitems; i++)
	{
		GdlItem    *item = &prog->items[i];
		GdlClause  *c;
		GdlClauseInfo *info;
		int			id;

		gdl_check_interrupts();
		if (item->kind == GDL_ITEM_DECL)
		{
			GdlDecl    *d = item->decl;

			id = get_pred(&st, d->name, d->loc, NULL);
			check_arity(&st, id, d->nargs, d->loc, ARITY_DECL, NULL, d);
			a->preds[id].decl = d;
			continue;
		}
		c = item->clause;
		info = &a->clauses[ci];
		info->clause = c;
		info->item = i;
		info->lit_pred = gdl_alloc(sizeof(int) * (c->nbody + 1));
		info->lit_assigns = gdl_alloc(sizeof(bool) * (c->nbody + 1));
		info->var_types = gdl_alloc(sizeof(GdlType) * (c->nvars + 1));

		id = get_pred(&st, c->head.name, c->head.loc, c);
		check_arity(&st, id, c->head.nargs, c->head.loc, ARITY_USE, c, NULL);
		info->head_pred = id;
		add_defining_clause(&st, id, ci);
		for (j = 0; j < c->head.nargs; j++)
			if (c->head.args[j]->kind == GDL_TERM_AGG)
				a->preds[id].has_agg = true;

		for (j = 0; j < c->nbody; j++)
		{
			GdlLiteral *l = &c->body[j];
			int			bid;

			info->lit_pred[j] = -1;
			if (l->kind == GDL_LIT_CMP)
				continue;
			bid = get_pred(&st, l->atom.name, l->atom.loc, c);
			check_arity(&st, bid, l->atom.nargs, l->atom.loc, ARITY_USE, c, NULL);
			if (a->preds[bid].is_edb)
				check_edb_columns(&st, &a->preds[bid], &l->atom, c);
			info->lit_pred[j] = bid;
		}
		ci++;
	}

	/* an aggregate predicate is defined by exactly one rule */
	for (i = 0; i < a->npreds; i++)
	{
		GdlPred    *pred = &a->preds[i];

		if (pred->is_edb)
			continue;
		if (pred->types == NULL)
			pred->types = gdl_alloc(sizeof(GdlType) * (pred->arity + 1));
		if (pred->has_agg && pred->nclauses > 1)
		{
			GdlClause  *c1 = a->clauses[pred->clauses[0]].clause;
			GdlClause  *c2 = a->clauses[pred->clauses[1]].clause;

			gdl_error(GDL_ERR_STRATIFY,
					  gdl_sprintf("line %d: %s\nline %d: %s", c1->loc.line,
								  gdl_clause_to_string(c1), c2->loc.line,
								  gdl_clause_to_string(c2)),
					  "compute the parts under other names and aggregate their union in one rule",
					  "predicate \"%s\" has an aggregate rule, so it must be defined by that rule alone, "
					  "but it has %d defining clauses", pred->name, pred->nclauses);
		}
	}
}
