/*
 * maint_pending.c — changes of base tables waiting to be applied to a
 * maintained target, and the statements still changing tables.
 *
 * A target is brought up to date from the changes of all its base tables
 * at once, never from one table while another's change is unapplied:
 * delete-and-rederive looks at the other tables as they were, which it can
 * only do for changes it knows.  Several tables change in one statement
 * (writable CTEs, ON DELETE CASCADE, a target maintained from a table whose
 * statement is still running its triggers), so each base table has a
 * BEFORE STATEMENT trigger that marks it as changing and the AFTER trigger
 * copies the statement's rows into the target's pending tables; a target
 * is updated only when none of its base tables is still changing.
 *
 * State is per backend and per transaction; a subtransaction's abort drops
 * what it added (its rows in the pending tables roll back with it).  A
 * target's pending changes are applied in the subtransaction of the
 * statement that ends last, which is where they were queued, except when a
 * base-table statement runs inside a subtransaction of another's (a user's
 * trigger with an EXCEPTION block writing a base table): if that
 * subtransaction aborts after applying changes queued outside it, they are
 * not queued again.  Not handled.
 */
#include "maint/gpudl_maint.h"

#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(gpudl_maintain_begin);
PG_FUNCTION_INFO_V1(gpudl_maintained_guard);

/* A statement that started changing a base table and has not ended. */
typedef struct Changing
{
	Oid			relid;
	SubTransactionId subid;
} Changing;

/* A base table's change waiting for one target. */
typedef struct Pending
{
	Oid			target;
	GpudlMaintChange change;
	SubTransactionId subid;		/* the subtransaction that created its tables */
} Pending;

static List *changing = NIL;	/* of Changing *, in TopTransactionContext */
static List *writing = NIL;		/* targets gpudl is writing now (Oids) */
static List *pending = NIL;		/* of Pending * */
static bool callbacks_registered = false;

/* Forget everything at the end of the transaction. */
static void
xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		changing = NIL;
		pending = NIL;
		writing = NIL;
	}
}

/* A subtransaction's abort drops what it added; its commit hands it up. */
static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		foreach(lc, changing)
			if (((Changing *) lfirst(lc))->subid == mySubid)
				changing = foreach_delete_current(changing, lc);
		foreach(lc, pending)
			if (((Pending *) lfirst(lc))->subid == mySubid)
				pending = foreach_delete_current(pending, lc);
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, changing)
			if (((Changing *) lfirst(lc))->subid == mySubid)
				((Changing *) lfirst(lc))->subid = parentSubid;
		foreach(lc, pending)
			if (((Pending *) lfirst(lc))->subid == mySubid)
				((Pending *) lfirst(lc))->subid = parentSubid;
	}
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
	callbacks_registered = true;
}

/*
 * BEFORE INSERT/UPDATE/DELETE/TRUNCATE FOR EACH STATEMENT on a base table:
 * the table is changing until its AFTER trigger (gpudl._maintain) runs.
 */
Datum
gpudl_maintain_begin(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	MemoryContext old;
	Changing   *c;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) ||
		!TRIGGER_FIRED_BEFORE(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._maintain_begin must be a BEFORE ... FOR EACH STATEMENT trigger")));
	register_callbacks();
	old = MemoryContextSwitchTo(TopTransactionContext);
	c = palloc(sizeof(Changing));
	c->relid = RelationGetRelid(td->tg_relation);
	c->subid = GetCurrentSubTransactionId();
	changing = lappend(changing, c);
	MemoryContextSwitchTo(old);
	return PointerGetDatum(NULL);
}

/*
 * gpudl writes target now (until gpudl_maint_writing_end): its guard
 * trigger lets the statements through.  An error ends the transaction or
 * subtransaction, whose callbacks forget it.
 */
void
gpudl_maint_writing_begin(Oid target)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

	register_callbacks();
	writing = lcons_oid(target, writing);
	MemoryContextSwitchTo(old);
}

void
gpudl_maint_writing_end(Oid target)
{
	writing = list_delete_oid(writing, target);
}

/*
 * BEFORE INSERT/UPDATE/DELETE/TRUNCATE FOR EACH STATEMENT on a maintained
 * target: only gpudl writes it (a row written by hand would make it differ
 * from the relation until the next recompute).
 */
Datum
gpudl_maintained_guard(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Oid			relid;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("gpudl._maintained_guard must be called as a trigger")));
	relid = RelationGetRelid(td->tg_relation);
	if (!list_member_oid(writing, relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" is maintained by gpudl", RelationGetRelationName(td->tg_relation)),
				 errdetail("Its rows are kept equal to a program's relation; change the tables the relation is derived from."),
				 errhint("To write it yourself, stop its maintenance first: gpudl_materialize(program, predicate, target, mode => 'replace').")));
	return PointerGetDatum(NULL);
}

/* The AFTER trigger of relid ran: one statement fewer changing it. */
void
gpudl_maint_statement_ended(Oid relid)
{
	ListCell   *lc;

	foreach(lc, changing)
		if (((Changing *) lfirst(lc))->relid == relid)
		{
			changing = foreach_delete_current(changing, lc);
			return;
		}
}

/* Is one of these tables still being changed by a statement? */
bool
gpudl_maint_any_changing(List *relids)
{
	ListCell   *lc;

	foreach(lc, changing)
		if (list_member_oid(relids, ((Changing *) lfirst(lc))->relid))
			return true;
	return false;
}

/* The pending table of one target's deleted (or inserted) rows of relid. */
char *
gpudl_maint_pending_sql(Oid target, Oid relid, bool deleted)
{
	return psprintf("pg_temp.gpudl_%s_%u_%u", deleted ? "pdel" : "pins", target, relid);
}

static Pending *
find_pending(Oid target, Oid relid)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		Pending    *p = lfirst(lc);

		if (p->target == target && p->change.relid == relid)
			return p;
	}
	return NULL;
}

/*
 * Add this statement's change of its table (the transition tables
 * registered with SPI, connected by the caller) to a target's pending
 * changes, acting as the target's maintainer.
 */
void
gpudl_maint_pending_add(Oid target, TriggerData *td)
{
	Oid			relid = RelationGetRelid(td->tg_relation);
	Pending    *p = find_pending(target, relid);
	MemoryContext old;
	char	   *base;
	int			i;

	register_callbacks();
	if (p == NULL)
	{
		old = MemoryContextSwitchTo(TopTransactionContext);
		p = palloc0(sizeof(Pending));
		p->target = target;
		p->change.relid = relid;
		p->subid = GetCurrentSubTransactionId();
		MemoryContextSwitchTo(old);
		base = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
		for (i = 0; i < 2; i++)
		{
			char	   *name = gpudl_maint_pending_sql(target, relid, i == 0);

			if (gpudl_maint_exec(psprintf("SELECT 1 WHERE pg_catalog.to_regclass(%s) IS NOT NULL",
										  quote_literal_cstr(name)), SPI_OK_SELECT) == 1)
				gpudl_maint_exec(psprintf("DELETE FROM %s", name), SPI_OK_DELETE);
			else
				gpudl_maint_exec(psprintf("CREATE TABLE %s (LIKE %s) ON COMMIT DROP", name, base),
								 SPI_OK_UTILITY);
		}
		old = MemoryContextSwitchTo(TopTransactionContext);
		pending = lappend(pending, p);
		MemoryContextSwitchTo(old);
	}
	p->change.statements++;
	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		p->change.truncated = true;
	if (td->tg_oldtable)
	{
		gpudl_maint_exec(psprintf("INSERT INTO %s SELECT * FROM gpudl_old",
								  gpudl_maint_pending_sql(target, relid, true)), SPI_OK_INSERT);
		p->change.deleted = true;
	}
	if (td->tg_newtable)
	{
		gpudl_maint_exec(psprintf("INSERT INTO %s SELECT * FROM gpudl_new",
								  gpudl_maint_pending_sql(target, relid, false)), SPI_OK_INSERT);
		p->change.inserted = true;
	}
	/* the planner joins the change with the target's indexes when it knows it is small */
	if (td->tg_oldtable)
		gpudl_maint_exec(psprintf("ANALYZE %s", gpudl_maint_pending_sql(target, relid, true)), SPI_OK_UTILITY);
	if (td->tg_newtable)
		gpudl_maint_exec(psprintf("ANALYZE %s", gpudl_maint_pending_sql(target, relid, false)), SPI_OK_UTILITY);
}

/* The pending changes of a target (GpudlMaintChange *, copies), in table order. */
List *
gpudl_maint_pending_of(Oid target)
{
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, pending)
	{
		Pending    *p = lfirst(lc);

		if (p->target == target)
		{
			GpudlMaintChange *c = palloc(sizeof(GpudlMaintChange));

			*c = p->change;
			out = lappend(out, c);
		}
	}
	return out;
}

/* A target's pending changes were applied: empty its pending tables.  SPI connected. */
void
gpudl_maint_pending_done(Oid target)
{
	ListCell   *lc;

	foreach(lc, pending)
	{
		Pending    *p = lfirst(lc);

		if (p->target != target)
			continue;
		gpudl_maint_exec(psprintf("DELETE FROM %s", gpudl_maint_pending_sql(target, p->change.relid, true)),
						 SPI_OK_DELETE);
		gpudl_maint_exec(psprintf("DELETE FROM %s", gpudl_maint_pending_sql(target, p->change.relid, false)),
						 SPI_OK_DELETE);
		p->change.deleted = p->change.inserted = p->change.truncated = false;
		p->change.statements = 0;
	}
}
