/*
 * pg_goal.c — goals of gpudl_query / gpudl_count / gpudl_materialize:
 * "anc(X, Y)", "anc(\"alice\", Y)", "path(1, _)".  A goal is one atom; its
 * constants filter the answer, repeated variables require equal columns.
 * WHERE conditions pushed down by the GpuDatalog scan bind more arguments
 * (gpudl_goal_bind); the bound arguments pick the goal-directed plan.
 */
#include "pg/gpudl_run.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

/* Parse a goal and check it against the program's predicates. */
GpudlGoalSpec *
gpudl_parse_goal(const GdlAnalysis *a, const char *goal_text)
{
	size_t		len = strlen(goal_text);
	char	   *src;
	GdlProgram *prog;
	GdlClause  *c;
	GpudlGoalSpec *g;
	int			i;

	/* the goal is written without the final period; accept it with one too */
	while (len > 0 && (goal_text[len - 1] == ' ' || goal_text[len - 1] == '\n' ||
					   goal_text[len - 1] == '\t'))
		len--;
	if (len > 0 && goal_text[len - 1] == '.')
		src = pnstrdup(goal_text, len);
	else
		src = psprintf("%.*s.", (int) len, goal_text);
	prog = gpudl_parse_text(src, NULL);
	if (prog->nitems != 1 || prog->items[0].kind != GDL_ITEM_CLAUSE ||
		prog->items[0].clause->nbody != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("a goal must be a single atom, like \"path(X, Y)\""),
				 errdetail("The goal was \"%s\".", goal_text)));
	c = prog->items[0].clause;

	g = palloc0(sizeof(GpudlGoalSpec));
	g->pred = gdl_analysis_find_pred(a, c->head.name);
	if (g->pred < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("predicate \"%s\" does not occur in the program", c->head.name),
				 errhint("Query a predicate that the program's rules define or read.")));
	g->arity = c->head.nargs;
	if (g->arity != a->preds[g->pred].arity)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("goal \"%s\" has %d arguments but predicate \"%s\" has %d",
						goal_text, g->arity, c->head.name, a->preds[g->pred].arity)));
	g->clause = c;
	g->args = c->head.args;
	g->types = a->preds[g->pred].types;
	/* a table's column of a type gpudl does not read can only be _ (42804) */
	if (a->preds[g->pred].is_edb && a->preds[g->pred].rel.types != NULL)
		for (i = 0; i < g->arity && i < a->preds[g->pred].rel.ncols; i++)
			if (a->preds[g->pred].rel.types[i] == GDL_TYPE_UNKNOWN &&
				g->args[i]->kind != GDL_TERM_ANON)
				gpudl_report_unreadable(ERROR, &a->preds[g->pred], i, "in the goal");
	for (i = 0; i < g->arity; i++)
	{
		GdlTerm    *t = g->args[i];
		GdlType		want = g->types[i];
		bool		ok = true;

		switch (t->kind)
		{
			case GDL_TERM_VAR:
			case GDL_TERM_ANON:
				break;
			case GDL_TERM_INT:
				ok = want == GDL_TYPE_INT || want == GDL_TYPE_BIGINT || want == GDL_TYPE_FLOAT8;
				break;
			case GDL_TERM_FLOAT:
				ok = want == GDL_TYPE_FLOAT8;
				break;
			case GDL_TERM_TEXT:
				ok = want == GDL_TYPE_TEXT;
				break;
			case GDL_TERM_BOOL:
				ok = want == GDL_TYPE_BOOL;
				break;
			default:
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("goal arguments must be variables or constants"),
						 errdetail("Argument %d of goal \"%s\" is an expression.", i + 1, goal_text)));
		}
		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("argument %d of goal \"%s\" does not match the type %s of predicate \"%s\"",
							i + 1, goal_text, gdl_type_name(want), c->head.name)));
	}
	return g;
}

/* Turn the goal's constants and repeated variables into an engine filter. */
GdlGoal *
gpudl_encode_goal(const GpudlGoalSpec *g, GdlDict *dict)
{
	GdlGoal    *goal = palloc0(sizeof(GdlGoal));
	int			i,
				j;

	goal->pred = g->pred;
	goal->bindings = palloc0(sizeof(GdlGoalBinding) * (g->arity + 1));
	goal->equal_a = palloc0(sizeof(int) * (g->arity + 1));
	goal->equal_b = palloc0(sizeof(int) * (g->arity + 1));
	for (i = 0; i < g->arity; i++)
	{
		GdlTerm    *t = g->args[i];
		GdlGoalBinding *b = &goal->bindings[goal->nbindings];

		b->arg = i;
		switch (t->kind)
		{
			case GDL_TERM_INT:
				if (g->types[i] == GDL_TYPE_FLOAT8)
				{
					double		f = (double) t->ival;

					memcpy(&b->value, &f, sizeof(f));
				}
				else
					b->value = t->ival;
				goal->nbindings++;
				break;
			case GDL_TERM_FLOAT:
				memcpy(&b->value, &t->fval, sizeof(double));
				goal->nbindings++;
				break;
			case GDL_TERM_BOOL:
				b->value = t->bval ? 1 : 0;
				goal->nbindings++;
				break;
			case GDL_TERM_TEXT:
				b->value = gdl_dict_intern(dict, t->text, strlen(t->text));
				goal->nbindings++;
				break;
			case GDL_TERM_VAR:
				/* the first earlier occurrence of the same variable */
				for (j = 0; j < i; j++)
					if (g->args[j]->kind == GDL_TERM_VAR && g->args[j]->var == t->var)
					{
						goal->equal_a[goal->nequal] = j;
						goal->equal_b[goal->nequal] = i;
						goal->nequal++;
						break;
					}
				break;
			default:
				break;
		}
	}
	return goal;
}

/* Is a goal argument a constant? */
static bool
term_is_const(const GdlTerm *t)
{
	return t->kind == GDL_TERM_INT || t->kind == GDL_TERM_FLOAT ||
		t->kind == GDL_TERM_TEXT || t->kind == GDL_TERM_BOOL;
}

/* Do two constants denote the same value? */
static bool
const_equal(const GdlTerm *x, const GdlTerm *y)
{
	if (x->kind == GDL_TERM_TEXT || y->kind == GDL_TERM_TEXT)
		return x->kind == y->kind && strcmp(x->text, y->text) == 0;
	if (x->kind == GDL_TERM_BOOL || y->kind == GDL_TERM_BOOL)
		return x->kind == y->kind && x->bval == y->bval;
	if (x->kind == GDL_TERM_FLOAT || y->kind == GDL_TERM_FLOAT)
		return (x->kind == GDL_TERM_FLOAT ? x->fval : (double) x->ival) ==
			(y->kind == GDL_TERM_FLOAT ? y->fval : (double) y->ival);
	return x->ival == y->ival;
}

/*
 * Bind goal argument 'arg' to a constant: every occurrence of its variable
 * becomes the constant.  Returns false when the argument already is another
 * constant: then the goal has no answers.
 */
bool
gpudl_goal_bind(GpudlGoalSpec *g, int arg, GdlTerm *value)
{
	GdlTerm    *t = g->args[arg];
	GdlTerm   **args;
	int			i;

	if (term_is_const(t))
		return const_equal(t, value);
	/* the parsed atom may be shared: bind in a copy */
	args = palloc(sizeof(GdlTerm *) * (g->arity + 1));
	memcpy(args, g->args, sizeof(GdlTerm *) * g->arity);
	for (i = 0; i < g->arity; i++)
		if (i == arg || (t->kind == GDL_TERM_VAR && args[i]->kind == GDL_TERM_VAR &&
						 args[i]->var == t->var))
			args[i] = value;
	g->args = args;
	return true;
}

/*
 * Flag the goal's bound arguments: its constants, and the arguments in
 * extra[] (pushed down, value possibly not known yet) with every other
 * occurrence of their variables.
 */
void
gpudl_goal_bound_args(const GpudlGoalSpec *g, const int *extra, int nextra, bool *bound)
{
	int			i,
				j;

	for (i = 0; i < g->arity; i++)
		bound[i] = term_is_const(g->args[i]);
	for (j = 0; j < nextra; j++)
	{
		const GdlTerm *t = g->args[extra[j]];

		bound[extra[j]] = true;
		for (i = 0; i < g->arity; i++)
			if (t->kind == GDL_TERM_VAR && g->args[i]->kind == GDL_TERM_VAR &&
				g->args[i]->var == t->var)
				bound[i] = true;
	}
}

/* The goal as Datalog text, with bound arguments shown as constants. */
char *
gpudl_goal_to_string(const GpudlGoalSpec *g, const GdlAnalysis *a)
{
	StringInfoData s;
	int			i;

	initStringInfo(&s);
	appendStringInfo(&s, "%s(", gdl_pred_name_quote(a->preds[g->pred].name));
	for (i = 0; i < g->arity; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", gdl_term_to_string(g->clause, g->args[i]));
	appendStringInfoChar(&s, ')');
	return s.data;
}

/*
 * A goal constant for a non-null Datum of type typid (integers, text,
 * bool), or NULL for another type.
 */
GdlTerm *
gpudl_datum_to_term(Datum d, Oid typid)
{
	GdlTerm    *t = palloc0(sizeof(GdlTerm));

	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			t->kind = GDL_TERM_INT;
			t->ival = typid == INT2OID ? DatumGetInt16(d) :
				typid == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);
			break;
		case BOOLOID:
			t->kind = GDL_TERM_BOOL;
			t->bval = DatumGetBool(d);
			break;
		case TEXTOID:
		case VARCHAROID:
			t->kind = GDL_TERM_TEXT;
			t->text = TextDatumGetCString(d);
			t->quoted = true;
			break;
		default:
			pfree(t);
			return NULL;
	}
	return t;
}
