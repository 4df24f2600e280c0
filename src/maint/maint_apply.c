/*
 * maint_apply.c — one statement's change of a base table applied to a
 * maintained target, in the statement's transaction.
 *
 * Deleted rows (DELETE, the old rows of UPDATE; rows inserted into a
 * negated table) go by delete-and-rederive:
 * every target row with a derivation through a deleted row is collected
 * into a temporary table (over-deletion, to a fixpoint, against the tables
 * as they were); those still derivable from what is left are found and
 * taken out of it before anything is deleted (so rows that stay are never
 * written), and the rest are deleted.  When the over-deletion reaches far (a dense closure, where one
 * edge lies on paths between thousands of pairs and nearly all of them have
 * another), it starts again checked against the relation computed afresh
 * by the engine: a candidate row the fresh relation holds is neither
 * deleted nor followed, so only rows that really go are collected and
 * nothing is put back (every row that goes has a derivation through a
 * deleted row or another row that goes, so the checked over-deletion still
 * reaches all of them).  Inserted rows (INSERT, COPY, the new rows of UPDATE; rows
 * deleted from a negated table) propagate semi-naively: each round joins only the last
 * round's new rows with the tables as they are, and keeps only rows the
 * target does not hold (INSERT ... ON CONFLICT DO NOTHING on the target's
 * unique index).  Work is proportional to the rows the change reaches.
 */
#include "maint/gpudl_maint.h"
#include "pg/gpudl_run.h"

#include "catalog/namespace.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"

/* Run one statement through SPI (connected by the caller); rows processed. */
uint64
gpudl_maint_exec(const char *sql, int expect)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expect)
		elog(ERROR, "gpudl: maintenance statement failed (%s): %s", SPI_result_code_string(rc), sql);
	return SPI_processed;
}

/* The target's column list "a, b". */
char *
gpudl_maint_column_list(const GpudlMaintPlan *mp)
{
	StringInfoData s;
	int			k;

	initStringInfo(&s);
	for (k = 0; k < mp->arity; k++)
		appendStringInfo(&s, "%s%s", k ? ", " : "", mp->target_cols[k]);
	return s.data;
}

/* Create temporary table 'name' like the target (dropped at commit), or empty it. */
static void
temp_table(const GpudlMaintPlan *mp, const char *name, bool unique)
{
	if (gpudl_maint_exec(psprintf("SELECT 1 WHERE pg_catalog.to_regclass(%s) IS NOT NULL",
								  quote_literal_cstr(name)), SPI_OK_SELECT) == 1)
	{
		gpudl_maint_exec(psprintf("DELETE FROM %s", name), SPI_OK_DELETE);
		return;
	}
	gpudl_maint_exec(psprintf("CREATE TABLE %s (LIKE %s) ON COMMIT DROP", name, mp->target_sql),
					 SPI_OK_UTILITY);
	if (unique)
		gpudl_maint_exec(psprintf("CREATE UNIQUE INDEX ON %s (%s)", name, gpudl_maint_column_list(mp)),
						 SPI_OK_UTILITY);
}

/*
 * The temporary tables of one target in this transaction (created on first
 * use, dropped at commit), emptied: the rounds' deltas and the rows gone.
 */
void
gpudl_maint_temp_tables(const GpudlMaintPlan *mp)
{
	temp_table(mp, mp->delta_sql, false);
	temp_table(mp, mp->next_sql, false);
	temp_table(mp, mp->gone_sql, true);
}

/* What a round joins. */
typedef enum RoundKind
{
	ROUND_GONE_FIRST,			/* over-deletion from the deleted rows */
	ROUND_GONE_NEXT,			/* over-deletion from the last round's rows */
	ROUND_REDERIVE,				/* over-deleted rows derivable from what stays */
	ROUND_REDERIVE_NEXT,		/* ... from the rows the last round found again */
	ROUND_ADD_FIRST,			/* the inserted rows (and the delta: rows put back) */
	ROUND_ADD_NEXT				/* the last round's new rows */
} RoundKind;

/*
 * The UNION ALL of one round's rule SELECTs (duplicates go at the insert): per rule, one SELECT per body atom
 * that reads what changed, that atom reading the change and the others the
 * tables as they are (or were, while over-deleting).  Empty when no rule
 * reads what changed.
 */
static char *
round_union(const GpudlMaintPlan *mp, RoundKind kind, bool only_in_target)
{
	StringInfoData u;
	GpudlMaintSource *src;
	int			ci;

	initStringInfo(&u);
	for (ci = 0; ci < mp->nclauses; ci++)
	{
		const GdlClause *c = mp->clauses[ci]->clause;
		int			l,
					j;

		src = palloc0(sizeof(GpudlMaintSource) * (c->nbody + 1));
		if (kind == ROUND_REDERIVE || kind == ROUND_REDERIVE_NEXT)
		{
			/*
			 * Heads among the over-deleted rows, once per target atom
			 * reading the rows found in the last round (the first round
			 * is rederive_witnesses).
			 */
			for (j = 0; j < c->nbody; j++)
			{
				StringInfoData one;
				bool		is_target;

				gpudl_maint_atom_change(mp, ci, j, &is_target);
				if (!is_target)
					continue;
				for (l = 0; l < c->nbody; l++)
				{
					gpudl_maint_atom_change(mp, ci, l, &is_target);
					src[l] = !is_target ? GPUDL_MS_CURRENT : l == j ? GPUDL_MS_DELTA : GPUDL_MS_KEPT;
				}
				initStringInfo(&one);
				if (gpudl_maint_rule_select(&one, mp, ci, src, mp->gone_sql, false))
					appendStringInfo(&u, "%s%s", u.len ? " UNION ALL " : "", one.data);
			}
			continue;
		}
		for (j = 0; j < c->nbody; j++)
		{
			bool		is_target;
			const GpudlMaintChange *ch = gpudl_maint_atom_change(mp, ci, j, &is_target);
			bool		neg = c->body[j].kind == GDL_LIT_NEG;
			bool		use;
			GpudlMaintSource changed;
			StringInfoData one;

			/* rows inserted into a negated table take derivations away, deleted ones add */
			switch (kind)
			{
				case ROUND_GONE_FIRST:
					use = ch != NULL && (neg ? ch->inserted : ch->deleted);
					changed = neg ? GPUDL_MS_INSERTED : GPUDL_MS_DELETED;
					break;
				case ROUND_ADD_FIRST:
					use = ch != NULL && (neg ? ch->deleted : ch->inserted);
					changed = neg ? GPUDL_MS_DELETED : GPUDL_MS_INSERTED;
					break;
				default:
					use = is_target;
					changed = GPUDL_MS_DELTA;
					break;
			}
			if (!use)
				continue;
			for (l = 0; l < c->nbody; l++)
			{
				if (l == j)
					src[l] = changed;
				else if (kind == ROUND_GONE_FIRST || kind == ROUND_GONE_NEXT)
					src[l] = GPUDL_MS_BEFORE;
				else
					src[l] = GPUDL_MS_CURRENT;
			}
			initStringInfo(&one);
			if (gpudl_maint_rule_select(&one, mp, ci, src, NULL,
										only_in_target))
				appendStringInfo(&u, "%s%s", u.len ? " UNION ALL " : "", one.data);
		}
	}
	return u.data;
}

/*
 * Insert a round's rows into 'into' (the target or the over-deleted set),
 * keeping only rows it does not hold, and put those into the next delta.
 * At most 'cap' candidate rows are read (0: no bound); *capped says the
 * round stopped there (the caller then recomputes instead), so a change
 * that reaches much of the table costs no more than the bound.
 */
static uint64
insert_new(const GpudlMaintPlan *mp, const char *into, const char *select, int64 cap, bool *capped)
{
	char	   *cols = gpudl_maint_column_list(mp);
	bool		isnull;
	int64		candidates;
	uint64		added;
	const char *fresh = "SELECT * FROM gpudl_candidates";

	/*
	 * Into the target: the candidates it already holds are dropped first,
	 * once each, by a probe of its unique index that stops at the first
	 * match (a subplan per row, which the planner cannot turn into a hash
	 * over the whole target) and reads the index alone where the table's
	 * pages are all-visible.  ON CONFLICT would check each one against the
	 * heap as well (p2p-Gnutella04, 100 edges inserted back: 430,652
	 * candidates, 387,154 of them held, 764,309 blocks read, 11.1 s on 2
	 * cores).
	 */
	if (strcmp(into, mp->target_sql) == 0)
	{
		StringInfoData held;
		int			k;

		initStringInfo(&held);
		appendStringInfo(&held, "SELECT DISTINCT * FROM gpudl_candidates AS c WHERE (SELECT true FROM %s AS t WHERE ",
						 mp->target_sql);
		for (k = 0; k < mp->arity; k++)
			appendStringInfo(&held, "%st.%s OPERATOR(pg_catalog.=) c.%s", k ? " AND " : "",
							 mp->target_cols[k], mp->target_cols[k]);
		appendStringInfoString(&held, " LIMIT 1) IS NULL");
		fresh = held.data;
	}
	gpudl_maint_exec(psprintf("WITH gpudl_candidates (%s) AS (%s%s), "
							  "gpudl_added AS (INSERT INTO %s (%s) %s "
							  "ON CONFLICT DO NOTHING RETURNING %s), "
							  "gpudl_next AS (INSERT INTO %s SELECT * FROM gpudl_added) "
							  "SELECT (SELECT count(*) FROM gpudl_candidates), (SELECT count(*) FROM gpudl_added)",
							  cols, select, cap > 0 ? psprintf(" LIMIT %lld", (long long) cap) : "",
							  into, cols, fresh, cols, mp->next_sql),
					 SPI_OK_SELECT);
	candidates = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	added = (uint64) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	*capped = cap > 0 && candidates >= cap;
	return added;
}

/* The candidate bound of a round, given what the change reached so far. */
static int64
round_cap(int64 limit, int64 reached)
{
	if (limit == PG_INT64_MAX)
		return 0;
	return Max(1, limit - reached + 1);
}

/* The next round's delta is this round's new rows. */
static void
advance(const GpudlMaintPlan *mp)
{
	gpudl_maint_exec(psprintf("DELETE FROM %s", mp->delta_sql), SPI_OK_DELETE);
	gpudl_maint_exec(psprintf("INSERT INTO %s SELECT * FROM %s", mp->delta_sql, mp->next_sql),
					 SPI_OK_INSERT);
	gpudl_maint_exec(psprintf("DELETE FROM %s", mp->next_sql), SPI_OK_DELETE);
	/* the planner joins the delta with the target's indexes when it knows it is small */
	gpudl_maint_exec(psprintf("ANALYZE %s", mp->delta_sql), SPI_OK_UTILITY);
}

/* Milliseconds since 'start'. */
double
gpudl_maint_ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * ... the same, checked against the fresh relation: the round's candidates
 * go into the candidates table first, those the fresh relation holds are
 * dropped, and the rest (rows that go) into 'into' and the next delta.
 * *candidates adds the candidates read.
 */
static uint64
insert_checked(const GpudlMaintPlan *mp, GpudlMaintFresh *fresh, const char *into, const char *select,
			   int64 cap, bool *capped, int64 *candidates)
{
	char	   *cols = gpudl_maint_column_list(mp);
	uint64		n;

	n = gpudl_maint_exec(psprintf("INSERT INTO %s (%s) %s%s", mp->cand_sql, cols, select,
								  cap > 0 ? psprintf(" LIMIT %lld", (long long) cap) : ""),
						 SPI_OK_INSERT);
	*candidates += (int64) n;
	*capped = cap > 0 && (int64) n >= cap;
	if (n == 0)
		return 0;
	if (gpudl_maint_fresh_drop_held(mp, fresh, RangeVarGetRelid(makeRangeVar("pg_temp", mp->cand_name, -1),
																 NoLock, false),
									mp->cand_sql) == 0)
		n = 0;
	else
		n = gpudl_maint_exec(psprintf("WITH gpudl_added AS (INSERT INTO %s (%s) SELECT %s FROM %s "
									  "ON CONFLICT DO NOTHING RETURNING %s) "
									  "INSERT INTO %s (%s) SELECT * FROM gpudl_added",
									  into, cols, cols, mp->cand_sql, cols, mp->next_sql, cols),
							 SPI_OK_INSERT);
	gpudl_maint_exec(psprintf("DELETE FROM %s", mp->cand_sql), SPI_OK_DELETE);
	return n;
}

/*
 * The planner's estimate of the rows a round's SELECT returns (the top plan
 * node's, from EXPLAIN): before a round that could read far past the
 * bound runs at all, so that a change reaching much of the table goes
 * straight to the fresh relation (p2p-Gnutella04, 10,000 edges inserted
 * back: a first round estimated at tens of millions of rows read 4.7 M of
 * them, 83 s on 2 cores, before the bound stopped it).
 */
static double
estimate_rows(const char *select)
{
	const char *key = "\"Plan Rows\": ";
	char	   *plan;
	char	   *at;

	gpudl_maint_exec(psprintf("EXPLAIN (FORMAT JSON) %s", select), SPI_OK_UTILITY);
	if (SPI_processed == 0)
		return 0;
	plan = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	at = plan ? strstr(plan, key) : NULL;
	return at ? strtod(at + strlen(key), NULL) : 0;
}

/*
 * A round's candidate bound cut to the rows the rounds so far would read
 * in the time left of budget_ms (negative: no time bound), at the rate
 * they read them: the over-deletion's rounds grow, and one round past the
 * time the checked way takes is not worth waiting for (p2p-Gnutella04, an
 * edge on paths: a last round of 1.3-3.8 s against a fresh relation of
 * 0.6-0.9 s on the GPU).  'cap' 0 is no bound.
 */
static int64
time_cap(int64 cap, int64 reached, double elapsed_ms, double budget_ms)
{
	double		rows;

	if (budget_ms < 0 || reached == 0 || elapsed_ms <= 0)
		return cap;
	rows = (double) reached / elapsed_ms * Max(budget_ms - elapsed_ms, 0.0);
	if (rows >= (double) PG_INT64_MAX / 2)
		return cap;
	return cap == 0 ? Max(1, (int64) rows) : Min(cap, Max(1, (int64) rows));
}

/*
 * The over-deletion of the change: the target rows with a derivation
 * through a deleted row (or a row inserted into a negated table), to a
 * fixpoint, into the gone table.  With 'fresh', only rows the fresh
 * relation lacks are collected and followed.  Returns false as soon as the
 * candidates read pass 'limit', or its rounds have taken more than
 * budget_ms (unless negative), nothing written to the target yet.
 */
static bool
overdelete(const GpudlMaintPlan *mp, bool mixed, int64 limit, double budget_ms, GpudlMaintFresh *fresh,
		   GpudlMaintStats *stats, int64 *reached)
{
	bool		capped = false;
	int64		candidates = 0;
	uint64		n;
	char	   *sel;
	int			round = 0;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	*reached = 0;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		sel = round_union(mp, round == 0 ? ROUND_GONE_FIRST : ROUND_GONE_NEXT, mixed);
		if (!sel[0])
			break;
		if (fresh != NULL)
			n = insert_checked(mp, fresh, mp->gone_sql, sel, round_cap(limit, candidates), &capped,
							   &candidates);
		else
		{
			n = insert_new(mp, mp->gone_sql, sel, time_cap(round_cap(limit, *reached), *reached,
														   gpudl_maint_ms_since(start), budget_ms), &capped);
			candidates = *reached + (int64) n;
		}
		*reached += (int64) n;
		if (capped || candidates > limit || (budget_ms >= 0 && n > 0 && gpudl_maint_ms_since(start) > budget_ms))
			return false;
		if (n == 0)
			break;
		advance(mp);
		stats->rounds++;
		round++;
	}
	return true;
}

/* Empty the round tables of a target (the gone table too when 'gone'). */
static void
empty_rounds(const GpudlMaintPlan *mp, bool gone)
{
	gpudl_maint_exec(psprintf("DELETE FROM %s", mp->delta_sql), SPI_OK_DELETE);
	gpudl_maint_exec(psprintf("DELETE FROM %s", mp->next_sql), SPI_OK_DELETE);
	if (gone)
		gpudl_maint_exec(psprintf("DELETE FROM %s", mp->gone_sql), SPI_OK_DELETE);
}

/*
 * The first rederivation round's condition on an over-deleted row g: one
 * witness subquery per clause (gpudl_maint_rule_witness), its target atoms
 * reading the target without the gone rows (KEPT), OR'ed, so each row
 * costs the probes up to its first derivation (p2p-Gnutella04, one edge:
 * 4,352 rows found again with a few probes each, where the join of every
 * derivation probed the 47 M-row target 73,984 times).  Empty when no
 * clause derives the target.
 */
static char *
rederive_witnesses(const GpudlMaintPlan *mp)
{
	StringInfoData w;
	int			ci;

	initStringInfo(&w);
	for (ci = 0; ci < mp->nclauses; ci++)
	{
		const GdlClause *c = mp->clauses[ci]->clause;
		GpudlMaintSource *src = palloc0(sizeof(GpudlMaintSource) * (c->nbody + 1));
		int			l;

		for (l = 0; l < c->nbody; l++)
		{
			bool		is_target;

			gpudl_maint_atom_change(mp, ci, l, &is_target);
			src[l] = is_target ? GPUDL_MS_KEPT : GPUDL_MS_CURRENT;
		}
		if (w.len)
			appendStringInfoString(&w, " OR ");
		gpudl_maint_rule_witness(&w, mp, ci, src, "g");
	}
	return w.data;
}

/*
 * Delete-and-rederive without writing what comes back: the over-deleted
 * rows (the gone table) that are still derivable are found before
 * anything is deleted, and taken out of the gone table, which then holds
 * only the rows that really go.  Round 0 derives heads among the gone
 * rows from the tables as they are now, the target read without the gone
 * rows (GPUDL_MS_KEPT); each next round once per target atom, that atom
 * reading the rows found in the last round, until none is found.  This is
 * delete-and-rederive's rederivation and insertion restricted to the
 * over-deleted rows (for a deletion every row it puts back is one of them;
 * rows a change's insertions add are found by the insertion rounds after),
 * so the target keeps the same rows, but the rows that come back are
 * neither deleted from the target nor inserted again with its indexes (on
 * a dense closure, nearly all of them: one edge of p2p-Gnutella04
 * over-deletes 4,352 to 64,878 rows, all of which come back).  Returns the
 * rows found.
 */
static uint64
keep_rederived(const GpudlMaintPlan *mp, GpudlMaintStats *stats)
{
	char	   *cols = gpudl_maint_column_list(mp);
	StringInfoData same;
	uint64		found = 0,
				n;
	int			k;
	RoundKind	kind = ROUND_REDERIVE;

	initStringInfo(&same);
	for (k = 0; k < mp->arity; k++)
		appendStringInfo(&same, "%sg.%s OPERATOR(pg_catalog.=) f.%s", k ? " AND " : "",
						 mp->target_cols[k], mp->target_cols[k]);
	for (;;)
	{
		char	   *sel = kind == ROUND_REDERIVE ? rederive_witnesses(mp) : round_union(mp, kind, false);

		CHECK_FOR_INTERRUPTS();
		if (!sel[0])
			break;
		if (kind == ROUND_REDERIVE)
			n = gpudl_maint_exec(psprintf("WITH gpudl_found AS (DELETE FROM %s AS g WHERE %s RETURNING g.*) "
										  "INSERT INTO %s SELECT * FROM gpudl_found",
										  mp->gone_sql, sel, mp->next_sql),
								 SPI_OK_INSERT);
		else
			n = gpudl_maint_exec(psprintf("WITH gpudl_found AS (DELETE FROM %s AS g USING (%s) AS f (%s) "
										  "WHERE %s RETURNING g.*) "
										  "INSERT INTO %s SELECT * FROM gpudl_found",
										  mp->gone_sql, sel, cols, same.data, mp->next_sql),
								 SPI_OK_INSERT);
		found += n;
		if (n == 0)
			break;
		advance(mp);
		stats->rounds++;
		kind = ROUND_REDERIVE_NEXT;
	}
	return found;
}

/*
 * How far a checked over-deletion, or an insertion, may read (candidates)
 * before the target is made equal to the fresh relation by one scan
 * instead: ten times the unchecked over-deletion's bound, whose
 * alternative is only an engine run (checked candidates are mostly rows
 * that stay, dropped at once; an insertion's only follows new rows).
 */
static int64
checked_limit(int64 limit)
{
	return limit > PG_INT64_MAX / 10 ? PG_INT64_MAX : limit * 10;
}

/*
 * Apply mp->changes (their rows in the target's pending tables) to the
 * target of mp, which must be incremental.  SPI connected.  Returns false,
 * with the target not yet consistent, as soon as the rows over-deleted
 * pass 'limit' (checked over-deletion off) or the rows inserted pass ten
 * times it and no fresh relation was computed: the caller then
 * recomputes, which is cheaper.
 */
bool
gpudl_maint_apply(const GpudlMaintPlan *mp, int64 limit, GpudlMaintStats *stats)
{
	bool		has_deleted = false;
	bool		mixed = false;
	bool		capped = false;
	GpudlMaintFresh *fresh = NULL;
	uint64		n;
	char	   *sel;
	ListCell   *lc;
	instr_time	start;

	/*
	 * Over-deletion against the tables as they were only derives rows the
	 * target holds, unless a table read "as it was" also holds rows inserted
	 * by the changes applied (an UPDATE, statements merged): only then are
	 * the candidates checked against the target (a check the planner may
	 * make with a scan of the whole target).
	 */
	foreach(lc, mp->changes)
	{
		GpudlMaintChange *c = lfirst(lc);

		has_deleted |= c->deleted || (c->inserted && list_member_oid(mp->negated_relids, c->relid));
		mixed |= c->inserted;
	}
	/* over-deletion leaves negations out, so it may derive rows the target lacks */
	mixed = (mixed && has_deleted) || mp->negated_relids != NIL;

	Assert(mp->incremental);
	gpudl_maint_temp_tables(mp);
	if (mp->group_cols != NULL)
		return gpudl_maint_apply_groups(mp, limit, stats);
	if (has_deleted)
	{
		StringInfoData del;
		int			k;
		int64		reached = 0;
		double		expected = 0;

		INSTR_TIME_SET_CURRENT(start);
		/* a first round the planner expects far past the bound is not run */
		if (limit != PG_INT64_MAX)
		{
			char	   *first = round_union(mp, ROUND_GONE_FIRST, mixed);

			expected = first[0] ? estimate_rows(first) : 0;
		}
		if (expected > (double) limit / 2 && gpudl_maintain_check_deletions == GPUDL_CHECK_NEVER)
			return false;		/* nothing written to the target yet: recompute */
		if (expected > (double) checked_limit(limit))
		{
			elog(DEBUG1, "gpudl: over-deletion of %s expected to reach %.0f rows (bound %lld): the target made equal to the fresh relation",
				 mp->target_sql, expected, (long long) limit);
			fresh = gpudl_maint_fresh_compute(mp);
			gpudl_maint_apply_result(mp, fresh, stats);
			return true;
		}
		/*
		 * The first round is only the start of a recursive over-deletion: at
		 * half the bound the rest is not worth reading unchecked
		 * (p2p-Gnutella04, 100 edges: 435,069 rows expected of a 470,595
		 * bound, reached after 1.6-3.1 s on the H200).
		 */
		if (gpudl_maintain_check_deletions == GPUDL_CHECK_ALWAYS || expected > (double) limit / 2 ||
			!overdelete(mp, mixed, limit,
						gpudl_maintain_check_deletions == GPUDL_CHECK_AUTO ? gpudl_maint_fresh_cost(mp->target) : -1,
						NULL, stats, &reached))
		{
			if (gpudl_maintain_check_deletions == GPUDL_CHECK_NEVER)
				return false;	/* nothing written to the target yet: recompute */
			/* it reaches far: again, checked against the relation as it is now */
			if (gpudl_maintain_check_deletions == GPUDL_CHECK_AUTO)
				elog(DEBUG1, "gpudl: over-deletion of %s %s after %.1f ms (bound %lld rows, %.0f expected); checking it against the fresh relation",
					 mp->target_sql, expected > (double) limit / 2 ? "skipped" : "stopped", gpudl_maint_ms_since(start),
					 (long long) limit, expected);
			empty_rounds(mp, true);
			INSTR_TIME_SET_CURRENT(start);
			fresh = gpudl_maint_fresh_compute(mp);
			temp_table(mp, mp->cand_sql, false);
			elog(DEBUG1, "gpudl: fresh relation of %s: %lld rows in %.1f ms", mp->target_sql,
				 (long long) gpudl_maint_fresh_rows(fresh), gpudl_maint_ms_since(start));
			INSTR_TIME_SET_CURRENT(start);
			if (!overdelete(mp, mixed, checked_limit(limit), -1, fresh, stats, &reached))
			{
				elog(DEBUG1, "gpudl: checked over-deletion of %s passed its bound: the target made equal to the fresh relation",
					 mp->target_sql);
				gpudl_maint_apply_result(mp, fresh, stats);
				return true;
			}
		}
		elog(DEBUG1, "gpudl: %sover-deletion of %s: %lld rows in %.1f ms", fresh ? "checked " : "",
			 mp->target_sql, (long long) reached, gpudl_maint_ms_since(start));
		initStringInfo(&del);
		appendStringInfo(&del, "DELETE FROM %s AS t USING %s AS g WHERE ", mp->target_sql, mp->gone_sql);
		for (k = 0; k < mp->arity; k++)
			appendStringInfo(&del, "%st.%s OPERATOR(pg_catalog.=) g.%s", k ? " AND " : "",
							 mp->target_cols[k], mp->target_cols[k]);
		empty_rounds(mp, false);
		if (reached > 0)
			gpudl_maint_exec(psprintf("ANALYZE %s", mp->gone_sql), SPI_OK_UTILITY);
		/* the over-deleted rows still derivable stay (none, when checked) */
		if (fresh == NULL && reached > 0)
		{
			INSTR_TIME_SET_CURRENT(start);
			n = keep_rederived(mp, stats);
			elog(DEBUG1, "gpudl: %llu of the over-deleted rows of %s derivable again in %.1f ms",
				 (unsigned long long) n, mp->target_sql, gpudl_maint_ms_since(start));
			reached -= (int64) n;
		}
		INSTR_TIME_SET_CURRENT(start);
		if (reached > 0)
			stats->deleted += gpudl_maint_exec(del.data, SPI_OK_DELETE);
		empty_rounds(mp, false);
		elog(DEBUG1, "gpudl: %lld rows deleted from %s in %.1f ms", (long long) stats->deleted,
			 mp->target_sql, gpudl_maint_ms_since(start));
	}
	/*
	 * Insertion rounds get ten times the budget: past it the alternative is a
	 * recompute, an engine run and a scan of the whole target (on
	 * ego-Facebook's SG, one edge inserted back took 7.1 s at the deletion's
	 * bound, recomputed, and 0.28 s without it).
	 */
	limit = checked_limit(limit);
	INSTR_TIME_SET_CURRENT(start);
	sel = round_union(mp, ROUND_ADD_FIRST, false);
	if (sel[0] && limit != PG_INT64_MAX && estimate_rows(sel) > (double) limit)
	{
		/* the insertion is expected to read far past its bound: recompute instead */
		elog(DEBUG1, "gpudl: insertion into %s expected to read past its bound (%lld rows): the target made equal to the fresh relation",
			 mp->target_sql, (long long) limit);
		if (fresh == NULL)
			return false;
		gpudl_maint_apply_result(mp, fresh, stats);
		return true;
	}
	n = sel[0] ? insert_new(mp, mp->target_sql, sel, round_cap(limit, stats->inserted), &capped) : 0;
	stats->inserted += n;
	while (n > 0 || capped)
	{
		CHECK_FOR_INTERRUPTS();
		if (capped || stats->inserted > limit)
			break;
		advance(mp);
		stats->rounds++;
		sel = round_union(mp, ROUND_ADD_NEXT, false);
		if (!sel[0])
			break;
		n = insert_new(mp, mp->target_sql, sel, round_cap(limit, stats->inserted), &capped);
		stats->inserted += n;
	}
	elog(DEBUG1, "gpudl: insertion into %s: %lld rows in %d rounds, %.1f ms", mp->target_sql,
		 (long long) stats->inserted, stats->rounds, gpudl_maint_ms_since(start));
	if (!capped && stats->inserted <= limit)
		return true;
	if (fresh == NULL)
		return false;
	gpudl_maint_apply_result(mp, fresh, stats);	/* the insertion reaches far: the fresh relation it is */
	return true;
}
