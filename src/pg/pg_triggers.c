/*
 * pg_triggers.c — integrity of gpudl's catalog under direct DML.
 *
 * Rules are data: users may INSERT, UPDATE or DELETE rows of gpudl.rules.
 * A BEFORE ROW trigger parses the row (it must hold exactly one clause or
 * .decl) and fills in its head; AFTER STATEMENT triggers validate every
 * touched program as a whole and bump its version, which invalidates the
 * compiled plans of every backend (they compare versions before running).
 */
#include "pg/gpudl_pg.h"

#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(gpudl_rules_check_row);
PG_FUNCTION_INFO_V1(gpudl_rules_after_change);
PG_FUNCTION_INFO_V1(gpudl_bindings_after_change);

/* Make sure we are called as the kind of trigger we were declared as. */
static TriggerData *
trigger_data(FunctionCallInfo fcinfo, const char *fname)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be called as a trigger", fname)));
	return (TriggerData *) fcinfo->context;
}

/*
 * BEFORE INSERT OR UPDATE on gpudl.rules: the rule text must parse into
 * exactly one item; head is set from it.
 */
Datum
gpudl_rules_check_row(PG_FUNCTION_ARGS)
{
	TriggerData *td = trigger_data(fcinfo, "gpudl_rules_check_row");
	HeapTuple	tup = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	int			rule_att = SPI_fnumber(desc, "rule");
	int			head_att = SPI_fnumber(desc, "head");
	bool		isnull;
	Datum		d = heap_getattr(tup, rule_att, desc, &isnull);
	GdlProgram *prog;
	Datum		head;
	bool		head_null = false;

	if (isnull)
		return PointerGetDatum(tup);	/* NOT NULL constraint reports it */
	prog = gpudl_parse_text(TextDatumGetCString(d), "gpudl.rules row");
	if (prog->nitems != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a row of gpudl.rules must hold exactly one clause, found %d", prog->nitems),
				 errhint("Use gpudl_add_rules() to add several clauses at once.")));
	head = CStringGetTextDatum(gdl_item_head(&prog->items[0]));
	return PointerGetDatum(heap_modify_tuple_by_cols(tup, desc, 1, &head_att, &head, &head_null));
}

/*
 * Validate (unless a gpudl_* function already did) and bump the version of
 * every program named in the transition table(s) of this statement.
 */
static void
validate_and_bump(TriggerData *td)
{
	const char *sql;
	List	   *names = NIL;
	MemoryContext caller = CurrentMemoryContext;
	ListCell   *lc;
	uint64		i;

	SPI_connect();
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "gpudl: could not register trigger data");
	if (td->tg_oldtable && td->tg_newtable)
		sql = "SELECT program FROM changed UNION SELECT program FROM changed_old ORDER BY 1";
	else
		sql = "SELECT DISTINCT program FROM changed ORDER BY 1";
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read the changed rows");
	for (i = 0; i < SPI_processed; i++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		MemoryContext old = MemoryContextSwitchTo(caller);

		names = lappend(names, pstrdup(name));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();

	foreach(lc, names)
	{
		const char *name = lfirst(lc);

		/*
		 * pg_restore and psql scripts of pg_dump load the catalog with an
		 * empty search_path, before or without the user's tables being
		 * visible by name: validating there would refuse a good dump.  The
		 * rows were validated when first written.
		 */
		if (gpudl_catalog_write_depth == 0 && namespace_search_path[0] != '\0')
			gpudl_validate_stored_program(name);
		gpudl_bump_version(name);
	}
}

/* AFTER INSERT/UPDATE/DELETE (statement) on gpudl.rules. */
Datum
gpudl_rules_after_change(PG_FUNCTION_ARGS)
{
	validate_and_bump(trigger_data(fcinfo, "gpudl_rules_after_change"));
	return PointerGetDatum(NULL);
}

/* AFTER INSERT/UPDATE/DELETE (statement) on gpudl.bindings. */
Datum
gpudl_bindings_after_change(PG_FUNCTION_ARGS)
{
	validate_and_bump(trigger_data(fcinfo, "gpudl_bindings_after_change"));
	return PointerGetDatum(NULL);
}
