/*
 * maint_groups.c — one change applied to an aggregating target (count,
 * sum, min, max grouped by the head's other arguments), in the changing
 * statement's transaction.
 *
 * An aggregate changes only in groups that gain or lose a binding of the
 * rule's body, so the change is the groups it reaches: a group key of a
 * binding through a deleted row (the other tables as they were) or through
 * an inserted row (the tables as they are) — for a negated table the other
 * way round.  Those groups are aggregated again from the tables as they
 * are, and the target changes only in rows that differ.  Work is the
 * groups reached, not the relation; a change reaching more than the bound
 * is recomputed whole by the caller.
 */
#include "maint/gpudl_maint.h"

#include "executor/spi.h"
#include "utils/builtins.h"

/* The UNION of the group keys the change reaches, over every rule and changed atom. */
static char *
reached_keys(const GpudlMaintPlan *mp)
{
	StringInfoData u;
	int			ci;

	initStringInfo(&u);
	for (ci = 0; ci < mp->nclauses; ci++)
	{
		const GdlClause *c = mp->clauses[ci]->clause;
		GpudlMaintSource *src = palloc0(sizeof(GpudlMaintSource) * (c->nbody + 1));
		int			j,
					l,
					pass;

		for (j = 0; j < c->nbody; j++)
		{
			bool		is_target;
			const GpudlMaintChange *ch = gpudl_maint_atom_change(mp, ci, j, &is_target);
			bool		neg = c->body[j].kind == GDL_LIT_NEG;

			if (ch == NULL)
				continue;
			/* pass 0: bindings lost (the tables as they were); pass 1: bindings gained */
			for (pass = 0; pass < 2; pass++)
			{
				bool		lost = pass == 0;
				StringInfoData one;

				if (!((lost && (neg ? ch->inserted : ch->deleted)) ||
					  (!lost && (neg ? ch->deleted : ch->inserted))))
					continue;
				for (l = 0; l < c->nbody; l++)
					src[l] = l != j ? (lost ? GPUDL_MS_BEFORE : GPUDL_MS_CURRENT)
						: (lost == neg ? GPUDL_MS_INSERTED : GPUDL_MS_DELETED);
				initStringInfo(&one);
				if (gpudl_maint_group_select(&one, mp, ci, src, NULL))
					appendStringInfo(&u, "%s%s", u.len ? " UNION " : "", one.data);
			}
		}
	}
	return u.data;
}

/*
 * Column conditions "a.c1 = b.c1 AND ..." over the target's columns (group
 * columns only when groups); the values are never NULL (the engine derives
 * none), and equality lets the planner use the target's indexes.
 */
static char *
same_columns(const GpudlMaintPlan *mp, const char *a, const char *b, bool groups)
{
	StringInfoData s;
	int			k;

	initStringInfo(&s);
	for (k = 0; k < mp->arity; k++)
		if (!groups || mp->group_cols[k])
			appendStringInfo(&s, "%s%s.%s OPERATOR(pg_catalog.=) %s.%s", s.len ? " AND " : "",
							 a, mp->target_cols[k], b, mp->target_cols[k]);
	return s.data;
}

/*
 * Apply mp->changes to aggregating target mp (temporary tables made).
 * Returns false, with nothing written, when more than 'limit' groups are
 * reached: the caller recomputes.
 */
bool
gpudl_maint_apply_groups(const GpudlMaintPlan *mp, int64 limit, GpudlMaintStats *stats)
{
	StringInfoData cols,
				fresh;
	char	   *keys = reached_keys(mp);
	uint64		n;
	int			ci,
				k;

	if (!keys[0])
		return true;
	initStringInfo(&cols);
	for (k = 0; k < mp->arity; k++)
		if (mp->group_cols[k])
			appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", mp->target_cols[k]);
	if (gpudl_maint_exec(psprintf("SELECT 1 WHERE pg_catalog.to_regclass(%s) IS NOT NULL",
								  quote_literal_cstr(mp->keys_sql)), SPI_OK_SELECT) == 1)
		gpudl_maint_exec(psprintf("DELETE FROM %s", mp->keys_sql), SPI_OK_DELETE);
	else
		gpudl_maint_exec(psprintf("CREATE TEMPORARY TABLE %s ON COMMIT DROP AS SELECT %s FROM %s WITH NO DATA",
								  mp->keys_sql, cols.data, mp->target_sql), SPI_OK_UTILITY);
	n = gpudl_maint_exec(psprintf("INSERT INTO %s SELECT * FROM (%s) AS k%s", mp->keys_sql, keys,
								  limit == PG_INT64_MAX ? "" : psprintf(" LIMIT %lld", (long long) limit + 1)),
						 SPI_OK_INSERT);
	if ((int64) n > limit)
		return false;
	if (n == 0)
		return true;
	stats->rounds++;
	gpudl_maint_exec(psprintf("ANALYZE %s", mp->keys_sql), SPI_OK_UTILITY);

	/* the reached groups aggregated again, into the (empty) next-round table */
	initStringInfo(&fresh);
	for (ci = 0; ci < mp->nclauses; ci++)
	{
		GpudlMaintSource *src = palloc0(sizeof(GpudlMaintSource) * (mp->clauses[ci]->clause->nbody + 1));
		StringInfoData one;

		initStringInfo(&one);
		if (gpudl_maint_group_select(&one, mp, ci, src, mp->keys_sql))
			appendStringInfo(&fresh, "%s%s", fresh.len ? " UNION " : "", one.data);
	}
	if (fresh.len)
		gpudl_maint_exec(psprintf("INSERT INTO %s (%s) %s", mp->next_sql, gpudl_maint_column_list(mp),
								  fresh.data), SPI_OK_INSERT);

	/* rows of reached groups that are no longer the aggregate go; new ones come */
	stats->deleted += gpudl_maint_exec(psprintf("DELETE FROM %s AS t USING %s AS k WHERE %s "
												"AND NOT EXISTS (SELECT 1 FROM %s AS f WHERE %s)",
												mp->target_sql, mp->keys_sql,
												same_columns(mp, "t", "k", true), mp->next_sql,
												same_columns(mp, "t", "f", false)),
									   SPI_OK_DELETE);
	stats->inserted += gpudl_maint_exec(psprintf("INSERT INTO %s (%s) SELECT %s FROM %s ON CONFLICT DO NOTHING",
												 mp->target_sql, gpudl_maint_column_list(mp),
												 gpudl_maint_column_list(mp), mp->next_sql),
										SPI_OK_INSERT);
	gpudl_maint_exec(psprintf("DELETE FROM %s", mp->next_sql), SPI_OK_DELETE);
	return true;
}
