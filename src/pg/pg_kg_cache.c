/*
 * pg_kg_cache.c — a program's knowledge graph kept between the calls of a
 * session (gpudl_predict, gpudl_mine): the graph, its dictionary and the
 * stored rules of each relation parsed, so that a split predicted relation
 * by relation, or mined and predicted in turn, reads the tables and parses
 * the rules once instead of once per call.
 *
 * Never stale.  An entry is keyed on the role, the program and its version
 * (any rule or binding change), the graph's entity type, and the tables the
 * program reads with their column types and change counts: a table is kept
 * only when its changes are counted (the statement-level trigger gpudl_load
 * puts on it, enabled, counting into gpudl.table_changes, transactionally),
 * so every INSERT, UPDATE, DELETE, TRUNCATE or COPY that commits, or this
 * session's own, makes the next call read again.  Tables without counts are
 * read per call, as before.  The stored rules are keyed on the change count
 * of gpudl.mined_rules (the same trigger, put there by 0.6).  The counts are
 * read before the rows, so a change between the two costs a read, never a
 * stale answer; an entry made in a transaction that wrote anything is
 * dropped when that transaction (or a subtransaction) aborts, so a change
 * that was rolled back cannot meet its count again.
 *
 * Never leaks.  Only the role that read the rows reuses them, and each call
 * checks again that it may SELECT every table (else it reads them itself,
 * with the error a read raises); a table with row-level security for the
 * caller is never kept (its rows depend on the reader).
 *
 * Bounded: one entry per session (the last graph read), dropped when another
 * replaces it, when gpudl.kg_cache is turned off, or when found stale.  An
 * entry in use by a running call is freed at the end of the transaction.
 */
#include "pg/gpudl_kg.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "rewrite/rewriteHandler.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(gpudl_kg_cache_status);

/* gpudl.kg_cache: keep the last graph between calls (pg_gucs.c). */
bool		gpudl_kg_cache = true;

/* What an entry was made from, compared on every call. */
typedef struct KgStamp
{
	Oid			userid;
	int64		version;
	GdlType		type;
	int			ntables;
	Oid		   *relids;			/* sorted */
	int64	   *changes;
	char	   *columns;		/* every table's column types, in relid order */
	int64		rules_changes;	/* of gpudl.mined_rules; -1: not counted */
} KgStamp;

typedef struct KgCacheEntry
{
	MemoryContext cxt;			/* holds the entry, its graph and stamp */
	KgStamp		stamp;
	GpudlKg    *kg;				/* with the stored rules it parsed */
	bool		provisional;	/* made in a transaction that wrote */
	int64		hits;
	TimestampTz built_at;
} KgCacheEntry;

static KgCacheEntry *entry = NULL;

/* Calls using the entry now; entries dropped meanwhile wait for the transaction's end. */
static int	in_use = 0;
static List *dropped = NIL;		/* of MemoryContext */
static bool callbacks_set = false;

/* Free every dropped entry (no call is running). */
static void
free_dropped(void)
{
	ListCell   *lc;

	foreach(lc, dropped)
		MemoryContextDelete((MemoryContext) lfirst(lc));
	list_free(dropped);
	dropped = NIL;
}

/* Drop the entry: freed now, or at the transaction's end while a call uses it. */
static void
drop_entry(void)
{
	if (entry == NULL)
		return;
	if (in_use > 0)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		dropped = lappend(dropped, entry->cxt);
		MemoryContextSwitchTo(old);
	}
	else
		MemoryContextDelete(entry->cxt);
	entry = NULL;
}

/*
 * At a transaction's end no call runs: free what was dropped; an entry made
 * in a transaction that aborted (or whose subtransaction did) goes too.
 */
static void
kg_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		if (entry != NULL && entry->provisional)
		{
			in_use = 0;
			drop_entry();
		}
	}
	else if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) && entry != NULL)
		entry->provisional = false;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
	{
		in_use = 0;
		free_dropped();
	}
}

static void
kg_subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && entry != NULL && entry->provisional)
		drop_entry();
}

/* Add a table to the list unless it is there. */
static void
add_table(Oid *relids, int *n, Oid relid)
{
	for (int i = 0; i < *n; i++)
		if (relids[i] == relid)
			return;
	relids[(*n)++] = relid;
}

/* A table's column types as a predicate reads them, for the stamp. */
static void
append_columns(StringInfo s, const GdlRelInfo *rel)
{
	for (int c = 0; c < rel->ncols; c++)
		appendStringInfo(s, "%d,", (int) rel->types[c]);
	appendStringInfoChar(s, '|');
}

/*
 * The tables a view reads, added to relids (views through views); false
 * when the view's rows may change while its tables do not (a mutable
 * function: now(), random(), a function reading other tables) or it reads
 * a table with row-level security (its rows then depend on who reads).
 */
static bool
add_view_tables(Oid view, Oid *relids, int *n, int cap, int depth, StringInfo sig)
{
	Relation	rel;
	bool		mutable;
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	Oid		   *refs;
	bool	   *is_view;
	int			nrefs;
	bool		ok = true;
	Oid			owner;

	if (depth > 16)
		return false;
	rel = relation_open(view, AccessShareLock);
	mutable = contain_mutable_functions((Node *) get_view_query(rel));
	owner = rel->rd_rel->relowner;
	relation_close(rel, AccessShareLock);
	if (mutable)
		return false;
	args[0] = ObjectIdGetDatum(view);
	SPI_connect();
	if (SPI_execute_with_args("SELECT DISTINCT d.refobjid, c.relkind, c.relrowsecurity, r.xmin::text FROM pg_catalog.pg_rewrite r "
							  "JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass "
							  "AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass "
							  "JOIN pg_catalog.pg_class c ON c.oid = d.refobjid "
							  "WHERE r.ev_class = $1 AND d.refobjid <> $1",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read a view's dependencies");
	nrefs = (int) SPI_processed;
	if (nrefs == 0)
	{
		/* rows of its own (VALUES): a new definition would not show */
		SPI_finish();
		return false;
	}
	refs = MemoryContextAlloc(CurTransactionContext, sizeof(Oid) * (nrefs + 1));
	is_view = MemoryContextAlloc(CurTransactionContext, sizeof(bool) * (nrefs + 1));
	for (int i = 0; i < nrefs; i++)
	{
		bool		isnull;
		HeapTuple	tup = SPI_tuptable->vals[i];
		char		kind = DatumGetChar(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));

		refs[i] = DatumGetObjectId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		is_view[i] = kind == RELKIND_VIEW;
		/* a new definition (CREATE OR REPLACE VIEW) rewrites the rule's row */
		if (i == 0)
			appendStringInfo(sig, "v%u@%s;", view, SPI_getvalue(tup, SPI_tuptable->tupdesc, 4));
		/* the view reads with its owner's rights: the owner must still be able to */
		if (!is_view[i] && pg_class_aclcheck(refs[i], owner, ACL_SELECT) != ACLCHECK_OK)
			ok = false;
		if (DatumGetBool(SPI_getbinval(tup, SPI_tuptable->tupdesc, 3, &isnull)) ||
			(kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_VIEW))
			ok = false;
	}
	SPI_finish();
	for (int i = 0; i < nrefs && ok; i++)
	{
		if (is_view[i])
			ok = add_view_tables(refs[i], relids, n, cap, depth + 1, sig);
		else if (*n < cap)
			add_table(relids, n, refs[i]);
		else
			ok = false;
	}
	pfree(is_view);
	pfree(refs);
	return ok;
}

/*
 * The stamp of a prepared graph: false when it cannot be kept (a table
 * whose changes are not counted, one the caller may not SELECT, one with
 * row-level security for the caller).
 */
static bool
make_stamp(GpudlKg *kg, KgStamp *st)
{
	GdlAnalysis *a = kg->analysis;
	Oid			rules_relid = get_relname_relid("mined_rules", get_namespace_oid("gpudl", false));
	MemoryContext caller = CurrentMemoryContext;
	int			cap = a->npreds + kg->ncand + 1024;	/* views add their tables */
	Oid		   *relids = palloc(sizeof(Oid) * cap);
	int			nnamed;
	StringInfoData views;		/* the views read and their definitions' versions */
	Datum	   *elems;
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum		args[1];
	StringInfoData cols;
	int			n = 0;
	bool		ok = true;

	memset(st, 0, sizeof(*st));
	st->userid = GetUserId();
	st->version = kg->def->version;
	st->type = kg->type;
	/* every table the program reads (its derived relations read them too) */
	for (int i = 0; i < a->npreds; i++)
		if (a->preds[i].is_edb && a->preds[i].rel.relid != InvalidOid)
			add_table(relids, &n, a->preds[i].rel.relid);
	for (int i = 0; i < kg->ncand; i++)
		if (kg->cand[i].pred.is_edb && kg->cand[i].pred.rel.relid != InvalidOid)
			add_table(relids, &n, kg->cand[i].pred.rel.relid);
	/*
	 * The caller must be able to SELECT every relation the program names
	 * (a view reads its tables with its owner's rights); a view stands for
	 * the tables it reads, whose changes are counted instead.
	 */
	nnamed = n;
	initStringInfo(&views);
	for (int i = 0; i < nnamed && ok; i++)
	{
		if (pg_class_aclcheck(relids[i], st->userid, ACL_SELECT) != ACLCHECK_OK ||
			check_enable_rls(relids[i], InvalidOid, true) != RLS_NONE)
			ok = false;
		else if (get_rel_relkind(relids[i]) == RELKIND_VIEW)
		{
			/* security_invoker views read their tables with the caller's rights: not kept */
			Relation	rel = relation_open(relids[i], AccessShareLock);
			bool		invoker = RelationHasSecurityInvoker(rel);

			relation_close(rel, AccessShareLock);
			ok = !invoker && add_view_tables(relids[i], relids, &n, cap, 0, &views);
			relids[i] = InvalidOid;	/* the view itself has no change count */
		}
	}
	if (!ok)
		return false;
	{
		int			kept = 0;

		for (int i = 0; i < n; i++)
			if (relids[i] != InvalidOid)
				relids[kept++] = relids[i];
		n = kept;
	}
	qsort(relids, n, sizeof(Oid), oid_cmp);	/* a stamp lists its tables in order */
	initStringInfo(&cols);
	appendStringInfoString(&cols, views.data);
	for (int i = 0; i < n && ok; i++)
	{
		appendStringInfo(&cols, "%u:", relids[i]);
		for (int p = 0; p < a->npreds; p++)
			if (a->preds[p].is_edb && a->preds[p].rel.relid == relids[i])
				append_columns(&cols, &a->preds[p].rel);
		for (int p = 0; p < kg->ncand; p++)
			if (kg->cand[p].pred.is_edb && kg->cand[p].pred.rel.relid == relids[i])
				append_columns(&cols, &kg->cand[p].pred.rel);
		appendStringInfoChar(&cols, ';');
	}
	if (!ok)
		return false;
	st->ntables = n;
	st->relids = relids;
	st->columns = cols.data;
	st->changes = palloc0(sizeof(int64) * (n + 1));
	st->rules_changes = -1;

	/* the change counts, read before any row; a table without one is not kept */
	elems = palloc(sizeof(Datum) * (n + 2));
	for (int i = 0; i < n; i++)
		elems[i] = ObjectIdGetDatum(relids[i]);
	elems[n] = ObjectIdGetDatum(rules_relid);
	args[0] = PointerGetDatum(construct_array(elems, n + 1, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	SPI_connect();
	/*
	 * The program's row version: a program dropped and created again under
	 * its name starts again at version 1, but in a new row.
	 */
	{
		Oid			ptypes[1] = {TEXTOID};
		Datum		pargs[1] = {CStringGetTextDatum(kg->program)};

		if (SPI_execute_with_args("SELECT xmin::text FROM gpudl.programs WHERE name = $1",
								  1, ptypes, pargs, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "gpudl: could not read gpudl.programs");
		if (SPI_processed == 1)
		{
			MemoryContext spi = MemoryContextSwitchTo(caller);

			st->columns = psprintf("%s#%s", st->columns, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
			MemoryContextSwitchTo(spi);
		}
	}
	if (SPI_execute_with_args("SELECT u.relid, c.changes FROM unnest($1) AS u(relid) "
							  "JOIN gpudl.table_changes c ON c.relid = u.relid "
							  "WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = u.relid "
							  "AND t.tgname = 'gpudl_cache_invalidate' AND t.tgenabled IN ('O', 'A'))",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.table_changes");
	{
		int			counted = 0;

		for (uint64 r = 0; r < SPI_processed; r++)
		{
			bool		isnull;
			Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
			int64		changes = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

			if (relid == rules_relid)
				st->rules_changes = changes;
			for (int i = 0; i < n; i++)
				if (relids[i] == relid)
				{
					st->changes[i] = changes;
					counted++;
				}
		}
		ok = counted == n;
	}
	SPI_finish();
	return ok;
}

/* Does the entry hold the graph of this stamp (the rules aside)? */
static bool
stamp_matches(const KgStamp *a, const KgStamp *b, const char *program_a, const char *program_b)
{
	return a->userid == b->userid && a->version == b->version && a->type == b->type &&
		strcmp(program_a, program_b) == 0 && a->ntables == b->ntables &&
		memcmp(a->relids, b->relids, sizeof(Oid) * a->ntables) == 0 &&
		memcmp(a->changes, b->changes, sizeof(int64) * a->ntables) == 0 &&
		strcmp(a->columns, b->columns) == 0;
}

/* A copy of a stamp in the current memory context. */
static void
copy_stamp(KgStamp *dst, const KgStamp *src)
{
	*dst = *src;
	dst->relids = palloc(sizeof(Oid) * (src->ntables + 1));
	memcpy(dst->relids, src->relids, sizeof(Oid) * src->ntables);
	dst->changes = palloc(sizeof(int64) * (src->ntables + 1));
	memcpy(dst->changes, src->changes, sizeof(int64) * src->ntables);
	dst->columns = pstrdup(src->columns);
}

/* Forget the stored rules a graph parsed (they changed). */
static void
forget_rules(GpudlKg *kg)
{
	if (kg->rules_cxt != NULL)
		MemoryContextDelete(kg->rules_cxt);
	kg->rules_cxt = NULL;
	kg->rules = NULL;
	kg->rules_read = NULL;
	kg->nrules_parsed = 0;
}

/* See gpudl_kg.h. */
GpudlKg *
gpudl_kg_acquire(const char *program, const char *target)
{
	/*
	 * Prepared once, in a context of its own under the call's: freed with
	 * the call when the graph is not kept (or an error ends the call),
	 * deleted at once on a hit, moved under CacheMemoryContext when kept.
	 */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "gpudl knowledge graph",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	GpudlKg    *kg = gpudl_kg_prepare(program, target);
	KgStamp		st;

	MemoryContextSwitchTo(old);
	if (!callbacks_set)
	{
		RegisterXactCallback(kg_xact_callback, NULL);
		RegisterSubXactCallback(kg_subxact_callback, NULL);
		callbacks_set = true;
	}
	if (!gpudl_kg_cache || !make_stamp(kg, &st))
	{
		/* the session keeps the last graph read: this one is not kept */
		drop_entry();
		old = MemoryContextSwitchTo(cxt);
		gpudl_kg_read(kg);
		MemoryContextSwitchTo(old);
		return kg;
	}
	if (entry != NULL && stamp_matches(&entry->stamp, &st, entry->kg->program, program))
	{
		MemoryContextDelete(cxt);
		entry->hits++;
		if (entry->stamp.rules_changes != st.rules_changes || st.rules_changes < 0)
		{
			forget_rules(entry->kg);
			entry->stamp.rules_changes = st.rules_changes;
		}
		gpudl_kg_left_notice(entry->kg, target);
		in_use++;
		return entry->kg;
	}
	drop_entry();

	old = MemoryContextSwitchTo(cxt);
	gpudl_kg_read(kg);
	entry = palloc0(sizeof(KgCacheEntry));
	entry->cxt = cxt;
	copy_stamp(&entry->stamp, &st);
	entry->kg = kg;
	entry->built_at = GetCurrentTimestamp();
	entry->provisional = GetTopTransactionIdIfAny() != InvalidTransactionId;
	kg->cached = true;
	MemoryContextSwitchTo(old);
	MemoryContextSetParent(cxt, CacheMemoryContext);
	in_use++;
	return kg;
}

/* See gpudl_kg.h. */
void
gpudl_kg_release(GpudlKg *kg)
{
	if (kg->cached && in_use > 0)
		in_use--;
	if (in_use == 0 && dropped != NIL)
		free_dropped();
}

/* The graph's per-relation arrays of stored rules, made on first use. */
static void
make_rules_arrays(GpudlKg *kg)
{
	if (kg->rules_cxt != NULL)
		return;
	kg->rules_cxt = AllocSetContextCreate(kg->cxt, "gpudl mined rules", ALLOCSET_DEFAULT_SIZES);
	kg->rules = MemoryContextAllocZero(kg->rules_cxt, sizeof(GpudlKgRules *) * (kg->nrels + 1));
	kg->rules_read = MemoryContextAllocZero(kg->rules_cxt, sizeof(bool) * (kg->nrels + 1));
}

/*
 * See gpudl_kg.h.  Each relation's stored rules are parsed once per graph,
 * into a context of their own under it (forgotten when the stored rules
 * change); a kept graph that parses them in a transaction that wrote is
 * dropped if it aborts, like one read then.
 */
GpudlKgRules *
gpudl_kg_rules(GpudlKg *kg, int rel)
{
	MemoryContext old;

	if (kg->rules_read != NULL && kg->rules_read[rel])
		return kg->rules[rel];
	make_rules_arrays(kg);
	old = MemoryContextSwitchTo(kg->rules_cxt);
	PG_TRY();
	{
		kg->rules[rel] = gpudl_kg_stored_rules(kg, rel);
	}
	PG_CATCH();
	{
		/* half-parsed rules are not kept: forget them all */
		MemoryContextSwitchTo(old);
		forget_rules(kg);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	kg->rules_read[rel] = true;
	if (kg->rules[rel] != NULL)
		kg->nrules_parsed += kg->rules[rel]->nrules;
	if (kg->cached && entry != NULL && entry->kg == kg &&
		GetTopTransactionIdIfAny() != InvalidTransactionId)
		entry->provisional = true;
	return kg->rules[rel];
}

/*
 * gpudl_kg_cache_status(): the graph this session keeps for the caller, if
 * any: program, entity type, relations, entities, facts, stored rules
 * parsed, bytes held, calls that reused it, when it was read.
 */
Datum
gpudl_kg_cache_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		v[9];
	bool		nulls[9] = {0};
	int64		facts = 0;

	InitMaterializedSRF(fcinfo, 0);
	if (entry == NULL || entry->stamp.userid != GetUserId())
		return (Datum) 0;
	for (int r = 0; r < gdl_mine_graph_nrels(entry->kg->graph); r++)
		facts += gdl_mine_graph_nfacts(entry->kg->graph, r);
	v[0] = CStringGetTextDatum(entry->kg->program);
	v[1] = CStringGetTextDatum(gdl_type_name(entry->stamp.type));
	v[2] = Int32GetDatum(gdl_mine_graph_nrels(entry->kg->graph));
	v[3] = Int64GetDatum(gdl_mine_graph_nentities(entry->kg->graph));
	v[4] = Int64GetDatum(facts);
	v[5] = Int64GetDatum(entry->kg->nrules_parsed);
	v[6] = Int64GetDatum((int64) MemoryContextMemAllocated(entry->cxt, true));
	v[7] = Int64GetDatum(entry->hits);
	v[8] = TimestampTzGetDatum(entry->built_at);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	return (Datum) 0;
}

/*
 * The change count of gpudl.mined_rules as the next call's stamp will read
 * it (make_stamp), or -1 when its changes are not counted.  Not read-only:
 * a read-only query keeps the calling statement's snapshot, taken before
 * the commit's DELETE counted its change.
 */
static int64
mined_rules_changes(void)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	int64		changes = -1;

	args[0] = ObjectIdGetDatum(get_relname_relid("mined_rules", get_namespace_oid("gpudl", false)));
	SPI_connect();
	if (SPI_execute_with_args("SELECT c.changes FROM gpudl.table_changes c WHERE c.relid = $1 "
							  "AND EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = c.relid "
							  "AND t.tgname = 'gpudl_cache_invalidate' AND t.tgenabled IN ('O', 'A'))",
							  1, argtypes, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.table_changes");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			changes = DatumGetInt64(d);
	}
	SPI_finish();
	return changes;
}

/*
 * See gpudl_kg.h.  The stored rules a kept graph parsed are keyed on the
 * change count of gpudl.mined_rules; the commit's DELETE has just counted
 * one (and holds the count's row until this transaction ends, so no other
 * session's change can share it), and the rules it stored are the run's,
 * in the run's order (their ids).  So the graph forgets what it parsed and
 * takes the run's rules, renamed as the parser would read them, for the
 * mined relations; the others are parsed when asked, as before.  The entry
 * is provisional: an abort drops it with the rows it describes.
 */
void
gpudl_kg_seed_rules(GpudlKg *kg, const char *target, const GdlMineResult *res, char **texts)
{
	MemoryContext old;
	int64		changes;
	int64	   *count;
	int64		i;

	if (!kg->cached || entry == NULL || entry->kg != kg)
		return;
	changes = mined_rules_changes();
	forget_rules(kg);
	if (changes < 0)
	{
		entry->stamp.rules_changes = -1;
		return;
	}
	entry->stamp.rules_changes = changes;
	entry->provisional = true;
	make_rules_arrays(kg);
	old = MemoryContextSwitchTo(kg->rules_cxt);
	count = palloc0(sizeof(int64) * (kg->nrels + 1));
	for (i = 0; i < res->nrules; i++)
		count[res->rules[i].head]++;
	for (int rel = 0; rel < kg->nrels; rel++)
	{
		if (target != NULL && strcmp(target, kg->rels[rel].name) != 0)
			continue;
		kg->rules_read[rel] = true;
		if (count[rel] == 0)
			continue;
		kg->rules[rel] = palloc0(sizeof(GpudlKgRules));
		kg->rules[rel]->rules = palloc(sizeof(GdlMineRule) * (count[rel] + 1));
		kg->rules[rel]->texts = palloc(sizeof(Datum) * (count[rel] + 1));
	}
	for (i = 0; i < res->nrules; i++)
	{
		GpudlKgRules *kr = kg->rules[res->rules[i].head];

		if (kr == NULL)
			continue;
		gpudl_kg_rule_as_parsed(&res->rules[i], &kr->rules[kr->nrules]);
		kr->texts[kr->nrules++] = PointerGetDatum(cstring_to_text(texts[i]));
		kg->nrules_parsed++;
		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(count);
	MemoryContextSwitchTo(old);
}
