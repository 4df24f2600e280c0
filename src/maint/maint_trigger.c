/*
 * maint_trigger.c — the triggers that keep maintained targets fresh.
 *
 * gpudl._maintain() is the AFTER ... FOR EACH STATEMENT trigger gpudl puts
 * on every base table of a maintained target (INSERT, UPDATE and DELETE
 * with transition tables, TRUNCATE; gpudl._maintain_begin() is its BEFORE
 * twin, maint_pending.c).  It adds the statement's rows to the pending
 * changes of each target reading the table; for each target none of whose
 * base tables is still changing it locks the target's catalog row (writers of one target's base tables
 * serialize there: under READ COMMITTED the later one waits and then sees
 * the earlier one's rows; under REPEATABLE READ or SERIALIZABLE it gets a
 * serialization failure to retry), then applies the change as the target's
 * maintainer: incrementally (maint_apply.c), or by a full recompute after
 * a TRUNCATE, a rule edit not yet applied, or for targets whose rules
 * cannot be maintained incrementally.
 *
 * gpudl._maintained_on_drop() (sql_drop) forgets targets that were dropped
 * or lost a base table; gpudl._maintained_forget() (after DELETE on the
 * catalog) takes gpudl's triggers off tables nothing maintained reads.
 */
#include "maint/gpudl_maint.h"
#include "pg/gpudl_run.h"

#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(gpudl_maintain_trigger);
PG_FUNCTION_INFO_V1(gpudl_maintained_on_drop);
PG_FUNCTION_INFO_V1(gpudl_maintained_forget);

/* Are two Oid lists the same set? */
static bool
same_relids(List *a, List *b)
{
	ListCell   *lc;

	if (list_length(a) != list_length(b))
		return false;
	foreach(lc, a)
		if (!list_member_oid(b, lfirst_oid(lc)))
			return false;
	return true;
}

/*
 * How many rows a change may reach (over-deleted or inserted) before it is
 * applied by recomputing: gpudl.maintain_recompute_share of the target's
 * rows, at least 1000; 1 never recomputes, 0 always does.
 */
static int64
change_limit(int64 rows)
{
	if (gpudl_maintain_recompute_share >= 1.0)
		return PG_INT64_MAX;
	if (gpudl_maintain_recompute_share <= 0.0)
		return 0;
	return Max(1000, (int64) (gpudl_maintain_recompute_share * rows));
}

/*
 * Bring one target up to date from its pending changes, unless one of its
 * base tables is still being changed by a statement (whose AFTER trigger
 * comes back here).  Locks the target's catalog row first.
 */
static void
maintain_target(Oid target)
{
	GpudlMaintStats stats = {0};
	GpudlMaintEntry *e;
	GpudlMaintIdentity id;
	GpudlMaintPlan *mp;
	List	   *changes;
	ListCell   *lc;
	bool		recompute = false;
	int64		version;
	instr_time	start,
				now;

	INSTR_TIME_SET_CURRENT(start);
	SPI_connect();
	e = gpudl_maint_read_entry(target, true, CurrentMemoryContext);
	changes = gpudl_maint_pending_of(target);
	if (e == NULL || changes == NIL || gpudl_maint_any_changing(e->base_relids))
	{
		SPI_finish();			/* forgotten meanwhile, nothing to do, or not yet */
		return;
	}
	foreach(lc, changes)
		recompute |= ((GpudlMaintChange *) lfirst(lc))->truncated;
	gpudl_maint_become_with_path(e->owner, e->search_path, &id);
	mp = gpudl_maint_plan_for(e->program, e->predicate, target, &version, e->base_relids);
	mp->changes = changes;
	recompute |= !mp->incremental || version != e->version ||
		!same_relids(mp->base_relids, e->base_relids) || strcmp(e->strategy, "incremental") != 0;
	if (!recompute)
	{
		gpudl_maint_writing_begin(target);
		/* false: the change reaches too much of the table */
		recompute = !gpudl_maint_apply(mp, change_limit(e->rows), &stats);
		gpudl_maint_writing_end(target);
	}
	gpudl_maint_pending_done(target);
	gpudl_maint_restore(&id);
	if (recompute)
	{
		SPI_finish();
		(void) gpudl_maint_refresh(target, true, &stats);
		return;
	}
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	gpudl_maint_record_change(target, &stats, INSTR_TIME_GET_MILLISEC(now), false);
	SPI_finish();
}

/*
 * AFTER INSERT/UPDATE/DELETE/TRUNCATE FOR EACH STATEMENT on a base table:
 * add the statement's rows to the pending changes of every target reading
 * the table (as each target's maintainer), then bring those targets up to
 * date in Oid order (two writers lock the targets they share in the same
 * order).
 */
Datum
gpudl_maintain_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	List	   *targets;
	MemoryContext caller = CurrentMemoryContext;
	ListCell   *lc;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._maintain must be called as a trigger")));
	td = (TriggerData *) fcinfo->context;
	if (!TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) || !TRIGGER_FIRED_AFTER(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._maintain must be an AFTER ... FOR EACH STATEMENT trigger")));
	gpudl_maint_statement_ended(RelationGetRelid(td->tg_relation));
	if (!gpudl_maint_catalog_present())
		return PointerGetDatum(NULL);
	SPI_connect();
	targets = gpudl_maint_targets_of(RelationGetRelid(td->tg_relation), caller);
	if (targets != NIL && SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "gpudl: could not register the trigger's transition tables");
	foreach(lc, targets)
	{
		GpudlMaintEntry *e = gpudl_maint_read_entry(lfirst_oid(lc), false, CurrentMemoryContext);
		GpudlMaintIdentity id;

		if (e == NULL)
			continue;
		gpudl_maint_become(e->owner, &id);
		gpudl_maint_pending_add(e->target, td);
		gpudl_maint_restore(&id);
	}
	SPI_finish();
	if (targets == NIL)
		return PointerGetDatum(NULL);
	gpudl_install_host();
	foreach(lc, targets)
	{
		CHECK_FOR_INTERRUPTS();
		maintain_target(lfirst_oid(lc));
	}
	return PointerGetDatum(NULL);
}

/*
 * sql_drop: forget the targets that were dropped and those whose base
 * table was (the target keeps its rows; gpudl._maintained_forget says so).
 */
Datum
gpudl_maintained_on_drop(PG_FUNCTION_ARGS)
{
	GpudlMaintIdentity id;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._maintained_on_drop must be called as an event trigger")));
	if (!gpudl_maint_catalog_present())
		PG_RETURN_VOID();
	SPI_connect();
	gpudl_maint_become(gpudl_catalog_owner(), &id);
	gpudl_maint_exec("DELETE FROM gpudl.maintained_targets m USING "
					 "(SELECT objid FROM pg_catalog.pg_event_trigger_dropped_objects() "
					 "WHERE classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass "
					 "AND objsubid OPERATOR(pg_catalog.=) 0) d "
					 "WHERE m.target::pg_catalog.oid OPERATOR(pg_catalog.=) d.objid "
					 "OR m.base_tables::pg_catalog.oid[] OPERATOR(pg_catalog.@>) ARRAY[d.objid]",
					 SPI_OK_DELETE);
	gpudl_maint_restore(&id);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * AFTER DELETE FOR EACH STATEMENT on gpudl.maintained_targets (a program
 * dropped, a target or base table dropped, maintenance stopped): say which
 * tables are no longer maintained and take gpudl's triggers off the tables
 * nothing maintained reads any more.
 */
Datum
gpudl_maintained_forget(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	MemoryContext caller = CurrentMemoryContext;
	List	   *relids = NIL;
	List	   *targets = NIL;
	ListCell   *lc;
	uint64		i;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._maintained_forget must be called as a trigger")));
	SPI_connect();
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "gpudl: could not register the trigger's transition table");
	gpudl_maint_exec("SELECT target::pg_catalog.oid, b::pg_catalog.oid FROM gone, "
					 "LATERAL pg_catalog.unnest(base_tables) AS b ORDER BY 1", SPI_OK_SELECT);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			target = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		Oid			base = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
		MemoryContext old = MemoryContextSwitchTo(caller);

		if (!list_member_oid(relids, base))
			relids = lappend_oid(relids, base);
		MemoryContextSwitchTo(old);
		if ((i == 0 || target != DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i - 1],
																	SPI_tuptable->tupdesc, 1, &isnull))) &&
			get_rel_name(target) != NULL)
		{
			ereport(NOTICE,
					(errmsg("table \"%s\" is no longer maintained; it keeps its rows", get_rel_name(target))));
			old = MemoryContextSwitchTo(caller);
			targets = lappend_oid(targets, target);
			MemoryContextSwitchTo(old);
		}
	}
	SPI_finish();
	foreach(lc, targets)
		gpudl_maint_drop_guard(lfirst_oid(lc));
	gpudl_maint_drop_unused_triggers(relids);
	return PointerGetDatum(NULL);
}
