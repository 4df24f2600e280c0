/*
 * maint_sql.c — a maintained target's rules as SQL.
 *
 * A rule of the target becomes one SELECT over its body atoms, each read
 * from a source chosen by the caller: the table as it is now, a changed base
 * table as it was before the statement, the statement's transition tables,
 * or the target's delta of the current round.  Semi-naive maintenance runs
 * one such SELECT per rule and per changed atom; PostgreSQL plans the joins
 * (the target's indexes make a small delta cost little).  Only rules over
 * base tables (positive or negated) and the target itself, without
 * aggregates and values the engine converts (numeric, dates, ...), are
 * translated, after the other derived predicates they read are unfolded
 * (maint_unfold.c); other targets are recomputed (why_recompute says why).
 */
#include "maint/gpudl_maint.h"
#include "pg/gpudl_run.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* Column types whose SQL values compare as the engine's values do. */
static bool
direct_type(Oid typid)
{
	switch (typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case FLOAT4OID:
		case FLOAT8OID:
		case TEXTOID:
		case VARCHAROID:
			return true;
		default:
			return false;
	}
}

/* Is every argument of a body atom a variable, '_' or a constant? */
static bool
plain_args(const GdlAtom *atom)
{
	int			k;

	for (k = 0; k < atom->nargs; k++)
		if (atom->args[k]->kind == GDL_TERM_BINOP || atom->args[k]->kind == GDL_TERM_NEG ||
			atom->args[k]->kind == GDL_TERM_AGG)
			return false;
	return true;
}

/* Walk the predicates pred depends on and collect the base tables. */
static void
walk_dependencies(GpudlMaintPlan *mp, int pred, bool *seen)
{
	const GdlAnalysis *a = mp->analysis;
	int			ci;

	if (seen[pred])
		return;
	seen[pred] = true;
	for (ci = 0; ci < a->nclauses; ci++)
	{
		const GdlClauseInfo *info = &a->clauses[ci];
		int			l;

		if (info->head_pred != pred)
			continue;
		for (l = 0; l < info->clause->nbody; l++)
		{
			int			lp = info->lit_pred[l];

			if (lp < 0)
				continue;
			if (mp->tables[lp] == NULL)
				walk_dependencies(mp, lp, seen);
			else if (!list_member_oid(mp->base_relids, mp->tables[lp]->relid))
				mp->base_relids = lappend_oid(mp->base_relids, mp->tables[lp]->relid);
		}
	}
}

/* The hint of a reason that names derived predicate lp: maintain it too. */
const char *
gpudl_maint_held_hint(const GpudlMaintPlan *mp, int lp)
{
	return psprintf(" (maintain \"%s\" in a table of its own too, then refresh this one)",
					mp->analysis->preds[lp].name);
}

/*
 * Why the (unfolded) rules of the target cannot be maintained as SQL delta
 * rules, or NULL: they may read base tables, negate base tables and read
 * the target, with plain atom arguments and columns whose SQL values
 * compare as the engine's do.
 */
static const char *
why_not_incremental(const GpudlMaintPlan *mp)
{
	const GdlAnalysis *a = mp->analysis;
	int			ci,
				l,
				k;

	for (ci = 0; ci < mp->nclauses; ci++)
	{
		const GdlClauseInfo *info = mp->clauses[ci];
		const GdlClause *c = info->clause;

		for (l = 0; l < c->nbody; l++)
		{
			int			lp = info->lit_pred[l];

			if (info->lit_assigns && info->lit_assigns[l])
				return "its rules assign computed values";
			if (c->body[l].kind == GDL_LIT_CMP || lp < 0)
				continue;
			if (!plain_args(&c->body[l].atom))
				return "its rules compute atom arguments";
			if (c->body[l].kind == GDL_LIT_NEG && mp->tables[lp] == NULL)
				return psprintf("its rules negate the derived predicate \"%s\"%s", a->preds[lp].name,
								gpudl_maint_held_hint(mp, lp));
			if (mp->tables[lp] == NULL)
				continue;
			for (k = 0; k < mp->tables[lp]->ncols; k++)
				if (!direct_type(mp->tables[lp]->types[k]))
					return psprintf("column %s of %s is of type %s, which the engine converts",
									mp->tables[lp]->cols[k], mp->tables[lp]->display,
									format_type_be(mp->tables[lp]->types[k]));
		}
	}
	return NULL;
}

/*
 * An aggregating target is maintained per group: set mp->group_cols (the
 * head's plain arguments), or say why not.
 */
static const char *
aggregate_shape(GpudlMaintPlan *mp)
{
	const GdlPred *p = &mp->analysis->preds[mp->pred];
	int			ci,
				k,
				ngroup = 0;

	mp->group_cols = palloc0(sizeof(bool) * (mp->arity + 1));
	for (k = 0; k < mp->arity; k++)
		mp->group_cols[k] = mp->clauses[0]->clause->head.args[k]->kind != GDL_TERM_AGG;
	for (ci = 0; ci < mp->nclauses; ci++)
		for (k = 0; k < mp->arity; k++)
		{
			const GdlTerm *t = mp->clauses[ci]->clause->head.args[k];

			if ((t->kind != GDL_TERM_AGG) != mp->group_cols[k])
				return "its rules aggregate different arguments";
			if (t->kind == GDL_TERM_AGG && t->agg == GDL_AGG_SUM && p->types &&
				p->types[k] == GDL_TYPE_FLOAT8)
				return "its rules sum floating-point values (the sum's rounding depends on the order)";
		}
	for (k = 0; k < mp->arity; k++)
		ngroup += mp->group_cols[k];
	if (ngroup == 0)
		return "its rules aggregate without grouping";
	return NULL;
}

/* A base table bound to a predicate, as the rules read it. */
static GpudlMaintTable *
base_table(const GdlRelInfo *rel)
{
	GpudlMaintTable *t = palloc0(sizeof(GpudlMaintTable));
	int			k;

	t->relid = (Oid) rel->relid;
	t->sql = quote_qualified_identifier(get_namespace_name(get_rel_namespace(t->relid)),
										get_rel_name(t->relid));
	t->ncols = rel->ncols;
	t->cols = palloc0(sizeof(char *) * (rel->ncols + 1));
	t->types = palloc0(sizeof(Oid) * (rel->ncols + 1));
	for (k = 0; k < rel->ncols; k++)
	{
		t->cols[k] = pstrdup(quote_identifier(rel->colnames[k]));
		t->types[k] = get_atttype(t->relid, get_attnum(t->relid, rel->colnames[k]));
	}
	t->display = rel->display_name;
	return t;
}

/* A maintained table holding a derived predicate: its first 'arity' columns. */
static GpudlMaintTable *
held_table(Oid relid, int arity)
{
	GpudlMaintTable *t = palloc0(sizeof(GpudlMaintTable));
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			c;

	t->relid = relid;
	t->sql = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
	t->cols = palloc0(sizeof(char *) * (arity + 1));
	t->types = palloc0(sizeof(Oid) * (arity + 1));
	for (c = 0; c < desc->natts && t->ncols < arity; c++)
		if (!TupleDescAttr(desc, c)->attisdropped)
		{
			t->cols[t->ncols] = pstrdup(quote_identifier(NameStr(TupleDescAttr(desc, c)->attname)));
			t->types[t->ncols++] = TupleDescAttr(desc, c)->atttypid;
		}
	table_close(rel, AccessShareLock);
	t->display = t->sql;
	return t;
}

/*
 * Compile the target predicate's rules for maintaining table 'target' (its
 * first 'arity' columns hold the predicate's arguments).
 */
GpudlMaintPlan *
gpudl_maint_plan(const GdlAnalysis *a, int pred, Oid target, List *held)
{
	GpudlMaintPlan *mp = palloc0(sizeof(GpudlMaintPlan));
	bool	   *seen = palloc0(sizeof(bool) * a->npreds);
	Relation	rel;
	TupleDesc	desc;
	ListCell   *lc;
	int			ci,
				c,
				n;

	mp->target = target;
	mp->analysis = a;
	mp->pred = pred;
	mp->arity = a->preds[pred].arity;
	mp->target_sql = quote_qualified_identifier(get_namespace_name(get_rel_namespace(target)),
												get_rel_name(target));
	mp->target_cols = palloc0(sizeof(char *) * (mp->arity + 1));
	mp->target_types = palloc0(sizeof(char *) * (mp->arity + 1));
	rel = table_open(target, AccessShareLock);
	desc = RelationGetDescr(rel);
	for (c = 0, n = 0; c < desc->natts && n < mp->arity; c++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, c);

		if (att->attisdropped)
			continue;
		mp->target_cols[n] = pstrdup(quote_identifier(NameStr(att->attname)));
		mp->target_types[n] = format_type_be(att->atttypid);
		n++;
	}
	table_close(rel, AccessShareLock);
	if (n != mp->arity)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("table \"%s\" has %d columns but predicate \"%s\" has %d",
						get_rel_name(target), n, a->preds[pred].name, mp->arity)));

	mp->tables = palloc0(sizeof(GpudlMaintTable *) * (a->npreds + 1));
	for (c = 0; c < a->npreds; c++)
		if (a->preds[c].is_edb)
			mp->tables[c] = base_table(&a->preds[c].rel);
	foreach(lc, held)
	{
		GpudlMaintHeld *h = lfirst(lc);
		int			hp = gdl_analysis_find_pred(a, h->predicate);

		if (hp >= 0 && hp != pred && !a->preds[hp].is_edb && !gpudl_maint_reaches(a, hp, pred, -1, NULL))
		{
			GpudlMaintTable *t = held_table(h->relid, a->preds[hp].arity);

			if (t->ncols == a->preds[hp].arity)
				mp->tables[hp] = t;
		}
	}
	mp->clauses = palloc0(sizeof(GdlClauseInfo *) * (a->nclauses + 1));
	for (ci = 0; ci < a->nclauses; ci++)
		if (a->clauses[ci].head_pred == pred)
			mp->clauses[mp->nclauses++] = &a->clauses[ci];
	walk_dependencies(mp, pred, seen);
	if (a->preds[pred].has_agg)
		mp->why_recompute = aggregate_shape(mp);
	if (mp->why_recompute == NULL)
		mp->why_recompute = gpudl_maint_unfold(mp);
	if (mp->why_recompute == NULL)
		mp->why_recompute = why_not_incremental(mp);
	for (ci = 0; ci < mp->nclauses && mp->why_recompute == NULL; ci++)
	{
		int			l;

		for (l = 0; l < mp->clauses[ci]->clause->nbody; l++)
			if (mp->clauses[ci]->clause->body[l].kind == GDL_LIT_NEG)
				mp->negated_relids = list_append_unique_oid(mp->negated_relids,
															mp->tables[mp->clauses[ci]->lit_pred[l]]->relid);
	}
	mp->incremental = (mp->why_recompute == NULL);
	mp->delta_sql = psprintf("pg_temp.gpudl_delta_%u", target);
	mp->next_sql = psprintf("pg_temp.gpudl_next_%u", target);
	mp->gone_sql = psprintf("pg_temp.gpudl_gone_%u", target);
	mp->cand_name = psprintf("gpudl_cand_%u", target);
	mp->cand_sql = psprintf("pg_temp.%s", mp->cand_name);
	mp->keys_sql = psprintf("pg_temp.gpudl_keys_%u", target);
	return mp;
}

/*
 * The change being applied to the table body literal 'lit' of clause
 * 'clause' reads (NULL when it reads no changed table); *is_target says
 * whether it reads the target itself.
 */
const GpudlMaintChange *
gpudl_maint_atom_change(const GpudlMaintPlan *mp, int clause, int lit, bool *is_target)
{
	const GdlClauseInfo *info = mp->clauses[clause];
	int			lp = info->lit_pred[lit];
	ListCell   *lc;

	*is_target = false;
	if (info->clause->body[lit].kind == GDL_LIT_CMP || lp < 0)
		return NULL;
	if (lp == mp->pred)
	{
		*is_target = true;
		return NULL;
	}
	if (mp->tables[lp] == NULL)
		return NULL;
	foreach(lc, mp->changes)
	{
		const GpudlMaintChange *c = lfirst(lc);

		if (c->relid == mp->tables[lp]->relid)
			return c;
	}
	return NULL;
}

/* A constant term as an SQL literal. */
static char *
constant_sql(const GdlTerm *t)
{
	switch (t->kind)
	{
		case GDL_TERM_INT:
			return psprintf("(%lld)", (long long) t->ival);
		case GDL_TERM_FLOAT:
			return psprintf("'%.17g'::pg_catalog.float8", t->fval);
		case GDL_TERM_TEXT:
			return psprintf("%s::pg_catalog.text", quote_literal_cstr(t->text));
		case GDL_TERM_BOOL:
			return t->bval ? "true" : "false";
		default:
			return NULL;
	}
}

/* A term as an SQL expression over the variables' columns (varref). */
static char *
term_sql(const GdlTerm *t, char **varref)
{
	static const char *ops[] = {"+", "-", "*", "/", "%"};

	switch (t->kind)
	{
		case GDL_TERM_VAR:
			return varref[t->var];
		case GDL_TERM_BINOP:
			return psprintf("(%s OPERATOR(pg_catalog.%s) %s)", term_sql(t->left, varref),
							ops[t->op], term_sql(t->right, varref));
		case GDL_TERM_NEG:
			return psprintf("(OPERATOR(pg_catalog.-) %s)", term_sql(t->left, varref));
		default:
			return constant_sql(t);
	}
}

/*
 * The FROM item one atom reads.  A changed table as it was is the table
 * with the deleted rows added back (rows inserted since make it larger than
 * it was, which only makes over-deletion delete more, and rederivation put
 * back).  Inserted rows are those still there when the change merged
 * several statements (a row may have been inserted, then deleted).
 */
static char *
source_sql(const GpudlMaintPlan *mp, int clause, int lit, const GpudlMaintTable *t, GpudlMaintSource src)
{
	const char *table;
	const GpudlMaintChange *c;
	bool		is_target;

	if (t == NULL)
		return src == GPUDL_MS_DELTA ? mp->delta_sql : mp->target_sql;
	table = t->sql;
	c = gpudl_maint_atom_change(mp, clause, lit, &is_target);
	switch (src)
	{
		case GPUDL_MS_BEFORE:
			if (c == NULL || !c->deleted)
				return (char *) table;
			return psprintf("(SELECT * FROM %s UNION ALL SELECT * FROM %s)", table,
							gpudl_maint_pending_sql(mp->target, c->relid, true));
		case GPUDL_MS_INSERTED:
			if (c->statements > 1 && c->deleted)
			{
				StringInfoData same;
				int			k;

				initStringInfo(&same);
				for (k = 0; k < t->ncols; k++)
					appendStringInfo(&same, " AND b.%s IS NOT DISTINCT FROM i.%s", t->cols[k], t->cols[k]);
				return psprintf("(SELECT * FROM %s AS i WHERE EXISTS (SELECT 1 FROM %s AS b WHERE true%s))",
								gpudl_maint_pending_sql(mp->target, c->relid, false), table, same.data);
			}
			return gpudl_maint_pending_sql(mp->target, c->relid, false);
		case GPUDL_MS_DELETED:
			return gpudl_maint_pending_sql(mp->target, c->relid, true);
		default:
			return (char *) table;
	}
}

/*
 * "NOT EXISTS (...)" for negated atom 'atom' of base table p, literal l,
 * over the variables' columns (varref; variables the body binds nowhere
 * else are existential, as '_').
 */
static char *
not_exists_sql(const GdlAtom *atom, const GpudlMaintTable *t, char **varref, int l)
{
	StringInfoData s;
	int			k,
				n = 0;

	initStringInfo(&s);
	appendStringInfo(&s, "NOT EXISTS (SELECT 1 FROM %s AS n%d", t->sql, l);
	for (k = 0; k < atom->nargs; k++)
	{
		const GdlTerm *arg = atom->args[k];

		if (arg->kind == GDL_TERM_ANON || (arg->kind == GDL_TERM_VAR && varref[arg->var] == NULL))
			continue;
		appendStringInfo(&s, " %s n%d.%s OPERATOR(pg_catalog.=) %s", n++ ? "AND" : "WHERE", l,
						 t->cols[k], term_sql(arg, varref));
	}
	appendStringInfoChar(&s, ')');
	return s.data;
}

/*
 * "NOT EXISTS (...)": the target's row that atom l (alias a<l>) reads is
 * not among the rows over-deleted and not yet found derivable again (the
 * gone table), for an atom read as GPUDL_MS_KEPT.
 */
static char *
not_gone_sql(const GpudlMaintPlan *mp, int l)
{
	StringInfoData s;
	int			k;

	initStringInfo(&s);
	appendStringInfo(&s, "NOT EXISTS (SELECT 1 FROM %s AS g%d WHERE ", mp->gone_sql, l);
	for (k = 0; k < mp->arity; k++)
		appendStringInfo(&s, "%sg%d.%s OPERATOR(pg_catalog.=) a%d.%s", k ? " AND " : "", l,
						 mp->target_cols[k], l, mp->target_cols[k]);
	appendStringInfoChar(&s, ')');
	return s.data;
}

/*
 * Append to 'out' the SELECT of clause 'clause' of the target (its head's
 * values, in the target's column order), each body atom read from
 * sources[literal] (comparisons ignore theirs).  A negated atom reads its
 * table as it is now (CURRENT: NOT EXISTS), is joined with a change's rows
 * (INSERTED: rows whose insertion took derivations away; DELETED: rows
 * whose deletion makes derivations, when not in the table now), or is left
 * out (BEFORE: over-deletion may over-approximate); restrict_to
 * (a table with the target's columns) keeps only heads found in it;
 * only_in_target keeps only heads the target holds.  Returns false when
 * the clause has nothing to select (a fact with no restriction).
 */
/* A rule body as SQL: its FROM list, its WHERE conditions, each variable's column. */
typedef struct BodySql
{
	StringInfoData from;
	StringInfoData where;
	char	  **varref;
	int			natoms;
} BodySql;

/*
 * The body atoms that only test for a row (an argument '_', every variable
 * also bound by an atom joined in FROM, not the atom reading the change):
 * read as EXISTS, they add no rows to the join that DISTINCT or ON
 * CONFLICT would have to remove (e2(Y, _) joined would repeat each binding
 * once per row of e2 with that Y).
 */
static bool *
existential_atoms(const GpudlMaintPlan *mp, int clause, const GpudlMaintSource *sources)
{
	const GdlClause *c = mp->clauses[clause]->clause;
	bool	   *exists = palloc0(sizeof(bool) * (c->nbody + 1));
	bool	   *joined_var = palloc0(sizeof(bool) * (c->nvars + 1));
	int			l,
				k;

	for (l = 0; l < c->nbody; l++)
	{
		const GdlAtom *atom = &c->body[l].atom;
		bool		anon = false;

		if (c->body[l].kind != GDL_LIT_ATOM)
			continue;
		for (k = 0; k < atom->nargs; k++)
			anon |= atom->args[k]->kind == GDL_TERM_ANON;
		exists[l] = anon && (sources[l] == GPUDL_MS_CURRENT || sources[l] == GPUDL_MS_BEFORE ||
							 sources[l] == GPUDL_MS_KEPT);
	}
	for (l = 0; l < c->nbody; l++)
		if (!exists[l] && c->body[l].kind != GDL_LIT_CMP &&
			(c->body[l].kind == GDL_LIT_ATOM || sources[l] == GPUDL_MS_INSERTED ||
			 sources[l] == GPUDL_MS_DELETED))
			for (k = 0; k < c->body[l].atom.nargs; k++)
				if (c->body[l].atom.args[k]->kind == GDL_TERM_VAR)
					joined_var[c->body[l].atom.args[k]->var] = true;
	/* an atom whose variable no joined atom binds stays joined */
	for (l = 0; l < c->nbody; l++)
		for (k = 0; exists[l] && k < c->body[l].atom.nargs; k++)
			if (c->body[l].atom.args[k]->kind == GDL_TERM_VAR &&
				!joined_var[c->body[l].atom.args[k]->var])
				exists[l] = false;
	return exists;
}

/* Build the FROM and WHERE of clause 'clause' with its atoms read from sources (see below). */
static void
body_sql(BodySql *b, const GpudlMaintPlan *mp, int clause, const GpudlMaintSource *sources)
{
	const GdlClauseInfo *info = mp->clauses[clause];
	const GdlClause *c = info->clause;
	bool	   *exists = existential_atoms(mp, clause, sources);
	int			l,
				k;
	int			pass;

	initStringInfo(&b->from);
	initStringInfo(&b->where);
	b->varref = palloc0(sizeof(char *) * (c->nvars + 1));
	b->natoms = 0;
	/* pass 0: the atoms joined in FROM; pass 1: existential atoms as EXISTS (their variables bound by then) */
	for (pass = 0; pass < 2; pass++)
		for (l = 0; l < c->nbody; l++)
		{
			const GdlAtom *atom = &c->body[l].atom;
			const GpudlMaintTable *t;
			char	  **cols;
			StringInfoData cond;

			if (c->body[l].kind == GDL_LIT_CMP ||
				(c->body[l].kind == GDL_LIT_NEG && sources[l] != GPUDL_MS_INSERTED &&
				 sources[l] != GPUDL_MS_DELETED) ||
				exists[l] != (pass == 1))
				continue;
			t = mp->tables[info->lit_pred[l]];
			cols = t ? t->cols : mp->target_cols;
			initStringInfo(&cond);
			for (k = 0; k < atom->nargs; k++)
			{
				const GdlTerm *arg = atom->args[k];
				char	   *col = psprintf("a%d.%s", l, cols[k]);

				if (arg->kind == GDL_TERM_ANON)
					continue;
				if (arg->kind == GDL_TERM_VAR && b->varref[arg->var] == NULL)
					b->varref[arg->var] = col;
				else
					appendStringInfo(&cond, "%s%s OPERATOR(pg_catalog.=) %s",
									 cond.len ? " AND " : "", col, term_sql(arg, b->varref));
			}
			if (sources[l] == GPUDL_MS_KEPT)
				appendStringInfo(&cond, "%s%s", cond.len ? " AND " : "", not_gone_sql(mp, l));
			if (pass == 0)
			{
				appendStringInfo(&b->from, "%s%s AS a%d", b->natoms++ ? ", " : "",
								 source_sql(mp, clause, l, t, sources[l]), l);
				if (cond.len)
					appendStringInfo(&b->where, "%s%s", b->where.len ? " AND " : "", cond.data);
			}
			else
				appendStringInfo(&b->where, "%sEXISTS (SELECT 1 FROM %s AS a%d%s%s)",
								 b->where.len ? " AND " : "", source_sql(mp, clause, l, t, sources[l]), l,
								 cond.len ? " WHERE " : "", cond.data);
		}
	for (l = 0; l < c->nbody; l++)
	{
		/* a negated table as it is now (rows a change deleted must be gone now too) */
		if (c->body[l].kind == GDL_LIT_NEG &&
			(sources[l] == GPUDL_MS_CURRENT || sources[l] == GPUDL_MS_DELETED))
			appendStringInfo(&b->where, "%s%s", b->where.len ? " AND " : "",
							 not_exists_sql(&c->body[l].atom, mp->tables[info->lit_pred[l]], b->varref, l));
	}
	for (l = 0; l < c->nbody; l++)
	{
		static const char *cmps[] = {"=", "<>", "<", "<=", ">", ">="};

		if (c->body[l].kind != GDL_LIT_CMP)
			continue;
		appendStringInfo(&b->where, "%s%s OPERATOR(pg_catalog.%s) %s", b->where.len ? " AND " : "",
						 term_sql(c->body[l].lhs, b->varref), cmps[c->body[l].cmp],
						 term_sql(c->body[l].rhs, b->varref));
	}
}

/* Keep only bindings whose head columns 'cols' (the target's column k where cols[k]) are in table 'in'. */
static void
restrict_heads(BodySql *b, const GpudlMaintPlan *mp, const GdlClause *c, const char *in,
			   const bool *cols)
{
	int			k;

	appendStringInfo(&b->from, "%s%s AS r", b->natoms ? ", " : "", in);
	for (k = 0; k < mp->arity; k++)
		if (cols == NULL || cols[k])
			appendStringInfo(&b->where, "%sr.%s OPERATOR(pg_catalog.=) %s", b->where.len ? " AND " : "",
							 mp->target_cols[k], term_sql(c->head.args[k], b->varref));
}

bool
gpudl_maint_rule_select(StringInfo out, const GpudlMaintPlan *mp, int clause,
						const GpudlMaintSource *sources, const char *restrict_to,
						bool only_in_target)
{
	const GdlClause *c = mp->clauses[clause]->clause;
	BodySql		b;
	int			k;

	body_sql(&b, mp, clause, sources);
	if (restrict_to)
		restrict_heads(&b, mp, c, restrict_to, NULL);
	else if (b.natoms == 0)
		return false;
	if (only_in_target)
	{
		/* a subplan probing the target's unique index per row, never a join the planner might hash */
		appendStringInfo(&b.where, "%s(SELECT true FROM %s AS t WHERE ", b.where.len ? " AND " : "",
						 mp->target_sql);
		for (k = 0; k < mp->arity; k++)
			appendStringInfo(&b.where, "%st.%s OPERATOR(pg_catalog.=) %s", k ? " AND " : "",
							 mp->target_cols[k], term_sql(c->head.args[k], b.varref));
		appendStringInfoString(&b.where, " LIMIT 1)");
	}
	appendStringInfoString(out, "SELECT ");
	for (k = 0; k < mp->arity; k++)
		appendStringInfo(out, "%sCAST(%s AS %s)", k ? ", " : "", term_sql(c->head.args[k], b.varref),
						 mp->target_types[k]);
	appendStringInfo(out, " FROM %s", b.from.data);
	if (b.where.len)
		appendStringInfo(out, " WHERE %s", b.where.data);
	return true;
}

/*
 * Append to 'out' a scalar subquery that is true when clause 'clause' has
 * a derivation, its atoms read from sources, whose head is the row of
 * alias 'outer' (a table with the target's columns), and NULL when it has
 * none.  It is a subplan run per outer row that stops at the first
 * derivation found (LIMIT 1), so finding whether an over-deleted row is
 * still derivable costs a few index probes, not a join of every
 * derivation (and never a join the planner might hash over the target).
 */
void
gpudl_maint_rule_witness(StringInfo out, const GpudlMaintPlan *mp, int clause,
						 const GpudlMaintSource *sources, const char *outer)
{
	const GdlClause *c = mp->clauses[clause]->clause;
	BodySql		b;
	int			k;

	body_sql(&b, mp, clause, sources);
	for (k = 0; k < mp->arity; k++)
		appendStringInfo(&b.where, "%s%s.%s OPERATOR(pg_catalog.=) %s", b.where.len ? " AND " : "",
						 outer, mp->target_cols[k], term_sql(c->head.args[k], b.varref));
	appendStringInfoString(out, "(SELECT true");
	if (b.natoms > 0)
		appendStringInfo(out, " FROM %s", b.from.data);
	appendStringInfo(out, " WHERE %s LIMIT 1)", b.where.len ? b.where.data : "true");
}

/*
 * For an aggregating clause: with keys_in NULL, the distinct group keys
 * (the head's plain arguments, in target column order) of the bindings the
 * body has with atoms read from sources; with keys_in (a table of the
 * target's group columns), the clause's rows of those groups, aggregated
 * as the engine does (over the distinct bindings of the body's variables).
 */
bool
gpudl_maint_group_select(StringInfo out, const GpudlMaintPlan *mp, int clause,
						 const GpudlMaintSource *sources, const char *keys_in)
{
	static const char *aggs[] = {"count", "sum", "min", "max"};
	const GdlClause *c = mp->clauses[clause]->clause;
	BodySql		b;
	char	  **outer;
	int			k,
				v,
				n = 0;

	body_sql(&b, mp, clause, sources);
	if (keys_in == NULL)
	{
		if (b.natoms == 0)
			return false;
		appendStringInfoString(out, "SELECT DISTINCT ");
		for (k = 0; k < mp->arity; k++)
			if (mp->group_cols[k])
				appendStringInfo(out, "%sCAST(%s AS %s)", n++ ? ", " : "",
								 term_sql(c->head.args[k], b.varref), mp->target_types[k]);
		appendStringInfo(out, " FROM %s", b.from.data);
		if (b.where.len)
			appendStringInfo(out, " WHERE %s", b.where.data);
		return true;
	}
	restrict_heads(&b, mp, c, keys_in, mp->group_cols);
	outer = palloc0(sizeof(char *) * (c->nvars + 1));
	appendStringInfoString(out, "SELECT ");
	for (k = 0; k < mp->arity; k++)
	{
		const GdlTerm *t = c->head.args[k];

		if (k == 0)
		{
			/* the head over the distinct bindings d(v0, v1, ...) */
			StringInfoData inner;

			initStringInfo(&inner);
			appendStringInfoString(&inner, "SELECT DISTINCT true AS gpudl_any");
			for (v = 0; v < c->nvars; v++)
				if (b.varref[v] != NULL)
				{
					appendStringInfo(&inner, ", %s AS v%d", b.varref[v], v);
					outer[v] = psprintf("d.v%d", v);
				}
			appendStringInfo(&inner, " FROM %s", b.from.data);
			if (b.where.len)
				appendStringInfo(&inner, " WHERE %s", b.where.data);
			b.from = inner;
		}
		if (t->kind == GDL_TERM_AGG)
			appendStringInfo(out, "%sCAST(%s(%s) AS %s)", k ? ", " : "", aggs[t->agg],
							 term_sql(t->arg, outer), mp->target_types[k]);
		else
			appendStringInfo(out, "%sCAST(%s AS %s)", k ? ", " : "", term_sql(t, outer),
							 mp->target_types[k]);
	}
	appendStringInfo(out, " FROM (%s) AS d GROUP BY ", b.from.data);
	for (k = 0, n = 0; k < mp->arity; k++)
		if (mp->group_cols[k])
			appendStringInfo(out, "%s%d", n++ ? ", " : "", k + 1);
	return true;
}
