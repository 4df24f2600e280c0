/*
 * exec_expr.c — compiling terms and comparisons of a clause into backend
 * bytecode (GdlBkExpr): variables become column references of the current
 * intermediate relation, or the inlined expression of the assignment that
 * computes them; constants are encoded (text through the run's dictionary,
 * float8 bit-cast); integers meeting float8 are converted; text compared
 * by order goes through the rank table.  Also evaluates constant terms on
 * the host, for facts, and builds the filters that answer a goal.
 */
#include "exec_int.h"

#include <string.h>

/* Start an empty expression. */
void
expr_init(ExprBuf *e)
{
	e->n = 0;
	e->cap = 8;
	e->code = gdl_alloc(sizeof(GdlBkInsn) * e->cap);
}

/* Append one instruction. */
void
expr_emit(ExprBuf *e, GdlBkOp op, int32_t arg, int64_t imm)
{
	if (e->n == e->cap)
	{
		e->cap *= 2;
		e->code = gdl_realloc(e->code, sizeof(GdlBkInsn) * e->cap);
	}
	e->code[e->n].op = op;
	e->code[e->n].arg = arg;
	e->code[e->n].imm = imm;
	e->n++;
}

/* The finished expression (the code stays owned by the buffer). */
GdlBkExpr
expr_done(ExprBuf *e)
{
	GdlBkExpr	x;

	x.ncode = e->n;
	x.code = e->code;
	return x;
}

/* Static type of a term: float8 when any float8 operand is involved. */
GdlType
expr_term_type(const GdlClauseInfo *info, const GdlTerm *t)
{
	GdlType		l,
				r;

	switch (t->kind)
	{
		case GDL_TERM_VAR:
			return info && info->var_types && info->var_types[t->var] != GDL_TYPE_UNKNOWN ?
				info->var_types[t->var] : GDL_TYPE_BIGINT;
		case GDL_TERM_INT:
		case GDL_TERM_FLOAT:
		case GDL_TERM_TEXT:
		case GDL_TERM_BOOL:
			return gdl_term_const_type(t);
		case GDL_TERM_NEG:
			return expr_term_type(info, t->left);
		case GDL_TERM_BINOP:
			l = expr_term_type(info, t->left);
			r = expr_term_type(info, t->right);
			return (l == GDL_TYPE_FLOAT8 || r == GDL_TYPE_FLOAT8) ? GDL_TYPE_FLOAT8 : GDL_TYPE_BIGINT;
		case GDL_TERM_AGG:
			if (t->agg == GDL_AGG_COUNT)
				return GDL_TYPE_BIGINT;
			return t->arg ? expr_term_type(info, t->arg) : GDL_TYPE_BIGINT;
		default:
			return GDL_TYPE_BIGINT;
	}
}

/* Double to its bit pattern. */
static int64_t
f2i(double d)
{
	int64_t		v;

	memcpy(&v, &d, sizeof(v));
	return v;
}

/* Bit pattern to double. */
static double
i2f(int64_t v)
{
	double		d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

/*
 * Emit code computing term t; the value is converted to float8 when 'want'
 * is float8 and the term is an integer.
 */
void
expr_term(const ExprEnv *env, ExprBuf *e, const GdlTerm *t, GdlType want)
{
	GdlType		ty = expr_term_type(env->info, t);
	bool		tofloat = want == GDL_TYPE_FLOAT8 && ty != GDL_TYPE_FLOAT8;
	int			i;

	switch (t->kind)
	{
		case GDL_TERM_VAR:
			for (i = 0; i < env->nlayout; i++)
				if (env->layout[i] == t->var)
					break;
			if (i < env->nlayout)
				expr_emit(e, GDL_BC_COL, i, 0);
			else if (env->assign_lit && env->assign_lit[t->var] >= 0)
			{
				const GdlLiteral *lit = &env->c->body[env->assign_lit[t->var]];
				const GdlTerm *x = (lit->lhs->kind == GDL_TERM_VAR && lit->lhs->var == t->var) ?
				lit->rhs : lit->lhs;

				expr_term(env, e, x, ty);
			}
			else
				gdl_error(GDL_ERR_INTERNAL, NULL, NULL,
						  "variable %s is not available in the plan",
						  env->c->varnames[t->var]);
			break;
		case GDL_TERM_INT:
			if (tofloat)
			{
				expr_emit(e, GDL_BC_CONST, 0, f2i((double) t->ival));
				return;
			}
			expr_emit(e, GDL_BC_CONST, 0, t->ival);
			break;
		case GDL_TERM_FLOAT:
		case GDL_TERM_TEXT:
		case GDL_TERM_BOOL:
			expr_emit(e, GDL_BC_CONST, 0, expr_const_value(t, ty, env->dict));
			break;
		case GDL_TERM_NEG:
			expr_term(env, e, t->left, ty);
			expr_emit(e, ty == GDL_TYPE_FLOAT8 ? GDL_BC_FNEG : GDL_BC_NEG, 0, 0);
			break;
		case GDL_TERM_BINOP:
			{
				static const GdlBkOp iops[] = {GDL_BC_ADD, GDL_BC_SUB, GDL_BC_MUL, GDL_BC_DIV, GDL_BC_MOD};
				static const GdlBkOp fops[] = {GDL_BC_FADD, GDL_BC_FSUB, GDL_BC_FMUL, GDL_BC_FDIV, GDL_BC_FDIV};

				if (ty == GDL_TYPE_FLOAT8 && t->op == GDL_OP_MOD)
					gdl_error(GDL_ERR_DATATYPE, NULL, NULL, "operator %% is not defined for float8");
				expr_term(env, e, t->left, ty);
				expr_term(env, e, t->right, ty);
				expr_emit(e, ty == GDL_TYPE_FLOAT8 ? fops[t->op] : iops[t->op], 0, 0);
				break;
			}
		default:
			gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "unexpected term in an expression");
	}
	if (tofloat)
		expr_emit(e, GDL_BC_I2F, 0, 0);
}

/* Emit code for a comparison literal: 1 when it holds. */
void
expr_cmp(const ExprEnv *env, ExprBuf *e, const GdlLiteral *lit)
{
	static const GdlBkOp iops[] = {GDL_BC_EQ, GDL_BC_NE, GDL_BC_LT, GDL_BC_LE, GDL_BC_GT, GDL_BC_GE};
	static const GdlBkOp fops[] = {GDL_BC_FEQ, GDL_BC_FNE, GDL_BC_FLT, GDL_BC_FLE, GDL_BC_FGT, GDL_BC_FGE};
	GdlType		lt = expr_term_type(env->info, lit->lhs);
	GdlType		rt = expr_term_type(env->info, lit->rhs);
	bool		isfloat = lt == GDL_TYPE_FLOAT8 || rt == GDL_TYPE_FLOAT8;
	bool		rank = !isfloat && lit->cmp != GDL_CMP_EQ && lit->cmp != GDL_CMP_NE &&
		(lt == GDL_TYPE_TEXT || rt == GDL_TYPE_TEXT);

	expr_term(env, e, lit->lhs, isfloat ? GDL_TYPE_FLOAT8 : lt);
	if (rank)
		expr_emit(e, GDL_BC_RANK, 0, 0);
	expr_term(env, e, lit->rhs, isfloat ? GDL_TYPE_FLOAT8 : rt);
	if (rank)
		expr_emit(e, GDL_BC_RANK, 0, 0);
	expr_emit(e, isfloat ? fops[lit->cmp] : iops[lit->cmp], 0, 0);
}

/* Value of a constant term, encoded for a column of type 'want'. */
int64_t
expr_const_value(const GdlTerm *t, GdlType want, GdlDict *dict)
{
	int64_t		a,
				b,
				r = 0;

	switch (t->kind)
	{
		case GDL_TERM_INT:
			return want == GDL_TYPE_FLOAT8 ? f2i((double) t->ival) : t->ival;
		case GDL_TERM_FLOAT:
			return f2i(t->fval);
		case GDL_TERM_TEXT:
			return gdl_dict_intern(dict, t->text, strlen(t->text));
		case GDL_TERM_BOOL:
			return t->bval ? 1 : 0;
		case GDL_TERM_NEG:
			a = expr_const_value(t->left, want, dict);
			if (want == GDL_TYPE_FLOAT8)
				return f2i(-i2f(a));
			if (a == INT64_MIN)
				gdl_error(GDL_ERR_OVERFLOW, NULL, NULL, "bigint out of range");
			return -a;
		case GDL_TERM_BINOP:
			a = expr_const_value(t->left, want, dict);
			b = expr_const_value(t->right, want, dict);
			if (want == GDL_TYPE_FLOAT8)
			{
				double		x = i2f(a),
							y = i2f(b);

				if ((t->op == GDL_OP_DIV || t->op == GDL_OP_MOD) && y == 0.0)
					gdl_error(GDL_ERR_DIVISION_BY_ZERO, NULL, NULL, "division by zero");
				switch (t->op)
				{
					case GDL_OP_ADD:
						return f2i(x + y);
					case GDL_OP_SUB:
						return f2i(x - y);
					case GDL_OP_MUL:
						return f2i(x * y);
					default:
						return f2i(x / y);
				}
			}
			switch (t->op)
			{
				case GDL_OP_ADD:
					if (__builtin_add_overflow(a, b, &r))
						gdl_error(GDL_ERR_OVERFLOW, NULL, NULL, "bigint out of range");
					return r;
				case GDL_OP_SUB:
					if (__builtin_sub_overflow(a, b, &r))
						gdl_error(GDL_ERR_OVERFLOW, NULL, NULL, "bigint out of range");
					return r;
				case GDL_OP_MUL:
					if (__builtin_mul_overflow(a, b, &r))
						gdl_error(GDL_ERR_OVERFLOW, NULL, NULL, "bigint out of range");
					return r;
				case GDL_OP_DIV:
				case GDL_OP_MOD:
					if (b == 0)
						gdl_error(GDL_ERR_DIVISION_BY_ZERO, NULL, NULL, "division by zero");
					if (b == -1)
					{
						if (t->op == GDL_OP_MOD)
							return 0;
						if (a == INT64_MIN)
							gdl_error(GDL_ERR_OVERFLOW, NULL, NULL, "bigint out of range");
						return -a;
					}
					return t->op == GDL_OP_DIV ? a / b : a % b;
			}
			return 0;
		default:
			gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "not a constant term");
	}
}

/* Intern every text constant of a term. */
static void
intern_term(const GdlTerm *t, GdlDict *dict)
{
	if (t == NULL)
		return;
	if (t->kind == GDL_TERM_TEXT && t->text)
		gdl_dict_intern(dict, t->text, strlen(t->text));
	intern_term(t->left, dict);
	intern_term(t->right, dict);
	intern_term(t->arg, dict);
}

/*
 * Intern the text constants of a clause, so that the dictionary (and its
 * ranks) is complete before evaluation starts.
 */
void
expr_intern_clause(const GdlClause *c, GdlDict *dict)
{
	int			k,
				l;

	for (k = 0; k < c->head.nargs; k++)
		intern_term(c->head.args[k], dict);
	for (l = 0; l < c->nbody; l++)
	{
		const GdlLiteral *lit = &c->body[l];

		if (lit->kind == GDL_LIT_CMP)
		{
			intern_term(lit->lhs, dict);
			intern_term(lit->rhs, dict);
		}
		else
			for (k = 0; k < lit->atom.nargs; k++)
				intern_term(lit->atom.args[k], dict);
	}
}

/*
 * The expressions that answer a goal from its predicate's relation, shared
 * by the one-context driver (exec_seminaive.c) and the partitioned one
 * (exec_part_run.c): one equality filter per bound argument and per pair of
 * arguments the goal equates, and one plain column per argument as the
 * output.  Allocates *filters and *outs (free them with expr_free_exprs);
 * returns the number of filters.
 */
int
expr_goal(const GdlGoal *goal, const GdlPred *pred, GdlBkExpr **filters, GdlBkExpr **outs)
{
	GdlBkExpr  *f = gdl_alloc(sizeof(GdlBkExpr) * (goal->nbindings + goal->nequal + 1));
	GdlBkExpr  *o = gdl_alloc(sizeof(GdlBkExpr) * (pred->arity + 1));
	ExprBuf		eb;
	int			nf = 0,
				k;

	for (k = 0; k < goal->nbindings; k++)
	{
		if (goal->bindings[k].arg < 0 || goal->bindings[k].arg >= pred->arity)
			gdl_error(GDL_ERR_PARAM, NULL, NULL, "goal argument %d out of range", goal->bindings[k].arg);
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, goal->bindings[k].arg, 0);
		expr_emit(&eb, GDL_BC_CONST, 0, goal->bindings[k].value);
		expr_emit(&eb, GDL_BC_EQ, 0, 0);
		f[nf++] = expr_done(&eb);
	}
	for (k = 0; k < goal->nequal; k++)
	{
		if (goal->equal_a[k] < 0 || goal->equal_a[k] >= pred->arity ||
			goal->equal_b[k] < 0 || goal->equal_b[k] >= pred->arity)
			gdl_error(GDL_ERR_PARAM, NULL, NULL, "goal argument out of range");
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, goal->equal_a[k], 0);
		expr_emit(&eb, GDL_BC_COL, goal->equal_b[k], 0);
		expr_emit(&eb, GDL_BC_EQ, 0, 0);
		f[nf++] = expr_done(&eb);
	}
	for (k = 0; k < pred->arity; k++)
	{
		expr_init(&eb);
		expr_emit(&eb, GDL_BC_COL, k, 0);
		o[k] = expr_done(&eb);
	}
	*filters = f;
	*outs = o;
	return nf;
}

/*
 * Free the code of nf filters and nout outputs and both arrays: what a
 * backend map was handed (expr_goal's, or a rule step's), done with.
 */
void
expr_free_exprs(GdlBkExpr *filters, int nf, GdlBkExpr *outs, int nout)
{
	int			k;

	for (k = 0; k < nf; k++)
		gdl_free((void *) filters[k].code);
	for (k = 0; k < nout; k++)
		gdl_free((void *) outs[k].code);
	gdl_free(filters);
	gdl_free(outs);
}

/*
 * Point env at a clause (info), the layout of the relation its expressions
 * read (nlayout columns; NULL for none) and the assignment of each
 * variable (NULL for none): what every compiling caller sets up alike.
 */
void
expr_env_init(ExprEnv *env, const GdlClauseInfo *info, const int *layout, int nlayout,
			  const int *assign_lit, GdlDict *dict)
{
	env->info = info;
	env->c = info->clause;
	env->layout = layout;
	env->nlayout = nlayout;
	env->assign_lit = assign_lit;
	env->dict = dict;
}
