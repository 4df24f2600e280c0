/*
 * maint_setup.c — setting up, refreshing and forgetting maintained targets.
 *
 * gpudl_materialize(..., mode => 'maintain') writes the target once, then
 * records it in gpudl.maintained_targets and puts statement triggers on
 * every base table the predicate depends on (maint_trigger.c applies each
 * change).  The role that sets a target up must own it and may put triggers
 * on the base tables; every change is applied with that role's rights and
 * the search_path it had, whoever changes a base table.  gpudl_refresh, an
 * edit of the program's rules, a TRUNCATE and targets whose rules cannot be
 * maintained incrementally recompute the relation fully with the engine and
 * apply the difference to the target.
 */
#include "maint/gpudl_maint.h"
#include "pg/gpudl_run.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "nodes/makefuncs.h"

PG_FUNCTION_INFO_V1(gpudl_refresh);

static const char *const trigger_names[] = {
	"gpudl_maintain_insert", "gpudl_maintain_update", "gpudl_maintain_delete",
	"gpudl_maintain_truncate", "gpudl_maintain_begin"
};
static const char *const trigger_specs[] = {
	"AFTER INSERT ON %s REFERENCING NEW TABLE AS gpudl_new FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintain()",
	"AFTER UPDATE ON %s REFERENCING OLD TABLE AS gpudl_old NEW TABLE AS gpudl_new FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintain()",
	"AFTER DELETE ON %s REFERENCING OLD TABLE AS gpudl_old FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintain()",
	"AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintain()",
	"BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintain_begin()"
};

/* A table's quoted qualified name. */
static char *
table_sql(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* Act as 'role' with the search_path 'path' (then pg_temp) until restored. */
void
gpudl_maint_become_with_path(Oid role, const char *path, GpudlMaintIdentity *id)
{
	GetUserIdAndSecContext(&id->save_userid, &id->save_sec);
	SetUserIdAndSecContext(role, id->save_sec | SECURITY_LOCAL_USERID_CHANGE);
	id->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", psprintf("%s%spg_temp", path, path[0] ? ", " : ""),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

/* Act as the catalog's owner (to write gpudl.maintained_targets). */
void
gpudl_maint_become(Oid role, GpudlMaintIdentity *id)
{
	gpudl_maint_become_with_path(role, "pg_catalog", id);
}

/* Undo gpudl_maint_become / become. */
void
gpudl_maint_restore(GpudlMaintIdentity *id)
{
	AtEOXact_GUC(true, id->guc_level);
	SetUserIdAndSecContext(id->save_userid, id->save_sec);
}

/* Is the 0.7 catalog there (the library may run against an older one)? */
bool
gpudl_maint_catalog_present(void)
{
	return OidIsValid(get_relname_relid("maintained_targets", get_namespace_oid("gpudl", true)));
}

void
gpudl_maint_require_catalog(void)
{
	if (!gpudl_maint_catalog_present())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("maintained tables need gpudl 0.7's catalog"),
				 errhint("Run ALTER EXTENSION gpudl UPDATE.")));
}


/*
 * Read the entry of a target (NULL when it is not maintained) into memory
 * context 'into'; lock takes the row FOR UPDATE (writers of one target's
 * base tables serialize on it).  SPI connected.
 */
GpudlMaintEntry *
gpudl_maint_read_entry(Oid target, bool lock, MemoryContext into)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(target)};
	GpudlMaintEntry *e;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	ArrayType  *arr;
	Datum	   *elems;
	int			nelems,
				i;
	MemoryContext old;
	GpudlMaintIdentity id;
	int			rc;

	gpudl_maint_become(gpudl_catalog_owner(), &id);
	rc = SPI_execute_with_args(psprintf("SELECT program, predicate, strategy, maintained_by::oid, search_path, "
									   "program_version, base_tables::oid[], rows "
									   "FROM gpudl.maintained_targets WHERE target OPERATOR(pg_catalog.=) $1%s",
									   lock ? " FOR UPDATE" : ""),
							  1, types, values, NULL, false, 1);
	gpudl_maint_restore(&id);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.maintained_targets");
	if (SPI_processed == 0)
		return NULL;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	arr = DatumGetArrayTypeP(SPI_getbinval(tup, desc, 7, &isnull));
	deconstruct_array(arr, OIDOID, sizeof(Oid), true, TYPALIGN_INT, &elems, NULL, &nelems);
	old = MemoryContextSwitchTo(into);
	e = palloc0(sizeof(GpudlMaintEntry));
	e->target = target;
	e->program = pstrdup(SPI_getvalue(tup, desc, 1));
	e->predicate = pstrdup(SPI_getvalue(tup, desc, 2));
	e->strategy = pstrdup(SPI_getvalue(tup, desc, 3));
	e->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 4, &isnull));
	e->search_path = pstrdup(SPI_getvalue(tup, desc, 5));
	e->version = DatumGetInt64(SPI_getbinval(tup, desc, 6, &isnull));
	for (i = 0; i < nelems; i++)
		e->base_relids = lappend_oid(e->base_relids, DatumGetObjectId(elems[i]));
	e->rows = DatumGetInt64(SPI_getbinval(tup, desc, 8, &isnull));
	MemoryContextSwitchTo(old);
	return e;
}

/* The Oids a one-parameter query of the catalog returns, as a list in 'into'.  SPI connected. */
static List *
oid_query(const char *sql, Oid argtype, Datum arg, MemoryContext into)
{
	List	   *out = NIL;
	uint64		i;

	if (SPI_execute_with_args(sql, 1, &argtype, &arg, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.maintained_targets");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			t = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		MemoryContext old = MemoryContextSwitchTo(into);

		out = lappend_oid(out, t);
		MemoryContextSwitchTo(old);
	}
	return out;
}

/* The targets (Oids) whose base tables include relid, in Oid order.  SPI connected. */
List *
gpudl_maint_targets_of(Oid relid, MemoryContext into)
{
	return oid_query("SELECT target::oid FROM gpudl.maintained_targets "
					 "WHERE base_tables OPERATOR(pg_catalog.@>) ARRAY[$1::pg_catalog.regclass] ORDER BY 1",
					 OIDOID, ObjectIdGetDatum(relid), into);
}

/* An Oid list as a regclass[] literal's Datum. */
static Datum
relid_array(List *relids)
{
	Datum	   *d = palloc(sizeof(Datum) * (list_length(relids) + 1));
	ListCell   *lc;
	int			n = 0;

	foreach(lc, relids)
		d[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	return PointerGetDatum(construct_array(d, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
}

/* Does relid carry trigger 'name'? */
static bool
has_trigger(Oid relid, const char *name)
{
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), CStringGetTextDatum(name)};

	if (SPI_execute_with_args("SELECT 1 FROM pg_catalog.pg_trigger WHERE tgrelid OPERATOR(pg_catalog.=) $1 "
							  "AND tgname OPERATOR(pg_catalog.=) $2::pg_catalog.name",
							  2, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read pg_trigger");
	return SPI_processed > 0;
}

/* Put the maintenance triggers on a base table (as the caller, who may). */
static void
install_triggers(Oid relid)
{
	int			i;

	for (i = 0; i < lengthof(trigger_names); i++)
		if (!has_trigger(relid, trigger_names[i]))
			gpudl_maint_exec(psprintf("CREATE TRIGGER %s %s", trigger_names[i],
									  psprintf(trigger_specs[i], table_sql(relid))),
							 SPI_OK_UTILITY);
}

/*
 * Take the maintenance triggers off those of 'relids' that no maintained
 * target reads any more (as each table's owner: they are gpudl's triggers).
 */
void
gpudl_maint_drop_unused_triggers(List *relids)
{
	ListCell   *lc;

	SPI_connect();
	foreach(lc, relids)
	{
		Oid			relid = lfirst_oid(lc);
		Oid			owner;
		GpudlMaintIdentity id;
		int			i;

		if (get_rel_name(relid) == NULL ||
			gpudl_maint_targets_of(relid, CurrentMemoryContext) != NIL ||
			!has_trigger(relid, trigger_names[0]))
			continue;
		owner = gpudl_rel_owner(relid);
		gpudl_maint_become(owner, &id);
		for (i = 0; i < lengthof(trigger_names); i++)
			gpudl_maint_exec(psprintf("DROP TRIGGER IF EXISTS %s ON %s", trigger_names[i], table_sql(relid)),
							 SPI_OK_UTILITY);
		gpudl_maint_restore(&id);
	}
	SPI_finish();
}

/* Put the guard on the target: only gpudl writes it (as the caller, its owner). */
static void
install_guard(Oid target)
{
	if (!has_trigger(target, "gpudl_maintained_guard"))
		gpudl_maint_exec(psprintf("CREATE TRIGGER gpudl_maintained_guard BEFORE INSERT OR UPDATE OR DELETE "
								  "OR TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION gpudl._maintained_guard()",
								  table_sql(target)), SPI_OK_UTILITY);
}

/* Take the guard off a target that is no longer maintained (as its owner). */
void
gpudl_maint_drop_guard(Oid target)
{
	GpudlMaintIdentity id;

	if (get_rel_name(target) == NULL)
		return;
	SPI_connect();
	if (has_trigger(target, "gpudl_maintained_guard"))
	{
		gpudl_maint_become(gpudl_rel_owner(target), &id);
		gpudl_maint_exec(psprintf("DROP TRIGGER gpudl_maintained_guard ON %s", table_sql(target)),
						 SPI_OK_UTILITY);
		gpudl_maint_restore(&id);
	}
	SPI_finish();
}

/* The name of the index gpudl makes on column k of the target (k 0: the unique index of all columns). */
char *
gpudl_maint_index_name(const GpudlMaintPlan *mp, int k)
{
	return k == 0 ? psprintf("gpudl_maint_%u_key", mp->target)
		: psprintf("gpudl_maint_%u_c%d", mp->target, k + 1);
}

/*
 * Create the unique index (and one per other column) changes need on the
 * target.  Up to arity 3, the index of column k carries the other columns
 * after it, so a change's joins on column k (the first over-deletion round
 * of a closure: every row ending where a deleted edge starts) read the rows
 * from the index alone, not from a heap page each.  Then the target's
 * statistics, which plan those joins.
 */
void
gpudl_maint_ensure_indexes(const GpudlMaintPlan *mp)
{
	char	   *cols = gpudl_maint_column_list(mp);
	bool		made = false;
	int			k;

	for (k = 0; k < mp->arity; k++)
	{
		char	   *name = gpudl_maint_index_name(mp, k);
		StringInfoData key;
		int			j;

		if (OidIsValid(get_relname_relid(name, get_rel_namespace(mp->target))))
			continue;
		initStringInfo(&key);
		appendStringInfoString(&key, k == 0 ? cols : mp->target_cols[k]);
		for (j = 0; k > 0 && mp->arity <= 3 && j < mp->arity; j++)
			if (j != k)
				appendStringInfo(&key, ", %s", mp->target_cols[j]);
		gpudl_maint_exec(psprintf("CREATE %sINDEX %s ON %s (%s)", k == 0 ? "UNIQUE " : "",
								  quote_identifier(name), mp->target_sql, key.data),
						 SPI_OK_UTILITY);
		made = true;
	}
	if (made)
		gpudl_maint_exec(psprintf("ANALYZE %s", mp->target_sql), SPI_OK_UTILITY);
}

/*
 * The other maintained tables of the program that may hold a derived
 * predicate for target: those among held_among (every one when NIL) that
 * the current role (the maintainer) owns.  Only those: the owner of a
 * table could take its guard off and write rows into it, and the target
 * would derive from them.
 */
static List *
held_tables(const char *program, Oid target, List *held_among)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[2] = {TEXTOID, OIDOID};
	Datum		values[2] = {CStringGetTextDatum(program), ObjectIdGetDatum(target)};
	GpudlMaintIdentity id;
	List	   *held = NIL;
	uint64		i;

	if (!gpudl_maint_catalog_present())
		return NIL;
	SPI_connect();
	gpudl_maint_become(gpudl_catalog_owner(), &id);
	if (SPI_execute_with_args("SELECT target::oid, predicate FROM gpudl.maintained_targets "
							  "WHERE program OPERATOR(pg_catalog.=) $1 AND target::oid OPERATOR(pg_catalog.<>) $2 "
							  "ORDER BY 1", 2, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read gpudl.maintained_targets");
	gpudl_maint_restore(&id);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		char	   *pred = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
		MemoryContext old;
		GpudlMaintHeld *h;

		if ((held_among != NIL && !list_member_oid(held_among, relid)) ||
			!pg_class_ownercheck(relid, GetUserId()))
			continue;
		old = MemoryContextSwitchTo(caller);
		h = palloc0(sizeof(GpudlMaintHeld));
		h->relid = relid;
		h->predicate = pstrdup(pred);
		held = lappend(held, h);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return held;
}

/*
 * Do the rules of derived predicate p read another derived predicate?
 * Only then can another maintained table hold one for it (a closure's
 * change skips the catalog query).
 */
static bool
reads_other_derived(const GdlAnalysis *a, int p)
{
	int			q;

	for (q = 0; q < a->npreds; q++)
		if (q != p && !a->preds[q].is_edb && gpudl_maint_reaches(a, p, q, -1, NULL))
			return true;
	return false;
}

/*
 * The maintenance plan of a program's predicate now (plan acquired and
 * pinned); derived predicates other maintained tables of the program hold
 * (among held_among, or any when NIL) are read from those tables.
 */
GpudlMaintPlan *
gpudl_maint_plan_for(const char *program, const char *predicate, Oid target, int64 *version,
					 List *held_among)
{
	bool		hit;
	GdlPlan    *plan = gpudl_plan_acquire(program, &hit, version);
	const GdlAnalysis *a = gdl_plan_analysis(plan);
	int			p = gdl_analysis_find_pred(a, predicate);
	GpudlMaintPlan *mp;

	gpudl_plan_pin(plan);
	if (p < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("predicate \"%s\" does not occur in program \"%s\"", predicate, program),
				 errdetail("Table \"%s\" is maintained as \"%s\".", get_rel_name(target), predicate),
				 errhint("Put the predicate's rules back, or drop the table's maintenance with gpudl_materialize(..., mode => 'replace').")));
	if (a->preds[p].is_edb)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("predicate \"%s\" of program \"%s\" is a base table, not derived", predicate, program),
				 errhint("Maintain a predicate the program's rules derive.")));
	mp = gpudl_maint_plan(a, p, target,
						  reads_other_derived(a, p) ? held_tables(program, target, held_among) : NIL);
	mp->program = pstrdup(program);
	mp->predicate = pstrdup(predicate);
	return mp;
}

/* Every base table must be a table that statement triggers with transition tables can watch. */
static void
check_base_tables(const GpudlMaintPlan *mp, const char *program)
{
	ListCell   *lc;

	foreach(lc, mp->base_relids)
	{
		Oid			relid = lfirst_oid(lc);
		char		kind = get_rel_relkind(relid);

		if (relid == mp->target)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("table \"%s\" is a base table of the predicate it would hold", get_rel_name(relid)),
					 errhint("Materialize into another table.")));
		if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot maintain a predicate that reads \"%s\", which is not a table",
							get_rel_name(relid)),
					 errdetail("Program \"%s\" reads it; changes of views and foreign tables fire no triggers.", program),
					 errhint("Use mode 'replace' and call gpudl_materialize again after changes.")));
		if (pg_class_aclcheck(relid, GetUserId(), ACL_TRIGGER) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to watch table \"%s\" for changes", get_rel_name(relid)),
					 errdetail("Maintaining a table puts triggers on every table its rules read."),
					 errhint("The table's owner can GRANT TRIGGER ON %s TO %s.", table_sql(relid),
							 quote_identifier(GetUserNameFromId(GetUserId(), false)))));
	}
}

/*
 * Recompute the relation with the engine and make the target equal to it
 * by deleting the rows it no longer derives and inserting the new ones
 * (maint_diff.c).  SPI connected, acting as the target's maintainer.
 * Returns the relation's rows.
 */
static int64
recompute_into(const GpudlMaintPlan *mp, GpudlMaintStats *stats)
{
	GpudlMaintFresh *f = gpudl_maint_fresh_compute(mp);

	gpudl_maint_apply_result(mp, f, stats);
	return gpudl_maint_fresh_rows(f);
}
/*
 * Write the catalog row of a target after a setup or a full refresh (as
 * the catalog's owner).  SPI connected.
 */
static void
write_entry(const GpudlMaintPlan *mp, const char *program, const char *predicate, Oid owner,
			const char *path, int64 version, int64 rows, double refresh_ms)
{
	Oid			types[11] = {OIDOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, OIDOID, TEXTOID,
	INT8OID, OIDARRAYOID, INT8OID, FLOAT8OID};
	Datum		values[11];
	char		nulls[12] = "           ";
	GpudlMaintIdentity id;

	values[0] = ObjectIdGetDatum(mp->target);
	values[1] = CStringGetTextDatum(program);
	values[2] = CStringGetTextDatum(predicate);
	values[3] = CStringGetTextDatum(mp->incremental ? "incremental" : "recompute");
	values[4] = mp->why_recompute ? CStringGetTextDatum(mp->why_recompute) : (Datum) 0;
	if (!mp->why_recompute)
		nulls[4] = 'n';
	values[5] = ObjectIdGetDatum(owner);
	values[6] = CStringGetTextDatum(path);
	values[7] = Int64GetDatum(version);
	values[8] = relid_array(mp->base_relids);
	values[9] = Int64GetDatum(rows);
	values[10] = Float8GetDatum(refresh_ms);
	gpudl_maint_become(gpudl_catalog_owner(), &id);
	if (SPI_execute_with_args("INSERT INTO gpudl.maintained_targets AS m (target, program, predicate, strategy, "
							  "why_recompute, maintained_by, search_path, program_version, base_tables, rows, "
							  "last_refresh, last_refresh_ms) "
							  "VALUES ($1::pg_catalog.regclass, $2, $3, $4, $5, $6::pg_catalog.regrole, $7, $8, "
							  "$9::pg_catalog.regclass[], $10, pg_catalog.now(), $11) "
							  "ON CONFLICT (target) DO UPDATE SET program = EXCLUDED.program, "
							  "predicate = EXCLUDED.predicate, strategy = EXCLUDED.strategy, "
							  "why_recompute = EXCLUDED.why_recompute, maintained_by = EXCLUDED.maintained_by, "
							  "search_path = EXCLUDED.search_path, program_version = EXCLUDED.program_version, "
							  "base_tables = EXCLUDED.base_tables, rows = EXCLUDED.rows, "
							  "last_refresh = EXCLUDED.last_refresh, last_refresh_ms = EXCLUDED.last_refresh_ms",
							  11, types, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "gpudl: could not record the maintained table");
	gpudl_maint_restore(&id);
}

/*
 * Record one applied change in the target's catalog row (rows adjusted by
 * what it inserted and deleted unless a refresh just set them).  SPI
 * connected.
 */
void
gpudl_maint_record_change(Oid target, const GpudlMaintStats *stats, double ms, bool rows_set)
{
	Oid			types[5] = {OIDOID, INT8OID, INT8OID, FLOAT8OID, BOOLOID};
	Datum		values[5] = {ObjectIdGetDatum(target), Int64GetDatum(stats->inserted),
	Int64GetDatum(stats->deleted), Float8GetDatum(ms), BoolGetDatum(rows_set)};
	GpudlMaintIdentity id;

	gpudl_maint_become(gpudl_catalog_owner(), &id);
	if (SPI_execute_with_args("UPDATE gpudl.maintained_targets SET "
							  "rows = CASE WHEN $5 THEN rows ELSE rows OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.-) $3 END, "
							  "changes = changes OPERATOR(pg_catalog.+) 1, last_change = pg_catalog.now(), "
							  "last_change_ms = $4, last_change_rows = $2 OPERATOR(pg_catalog.+) $3 "
							  "WHERE target OPERATOR(pg_catalog.=) $1",
							  5, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "gpudl: could not record the change of a maintained table");
	gpudl_maint_restore(&id);
}

/* Milliseconds since 'start'. */
static double
ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * gpudl_materialize's mode 'maintain', after the target was written: record
 * it, index it for incremental changes, watch its base tables.  Returns the
 * rows written.
 */
int64
gpudl_maint_setup(const char *program, const char *predicate, Oid target)
{
	instr_time	start;
	int64		version;
	GpudlMaintPlan *mp;
	Form_pg_class form;
	HeapTuple	tup;
	int64		rows;
	ListCell   *lc;

	INSTR_TIME_SET_CURRENT(start);
	gpudl_maint_require_catalog();
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(target));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", target);
	form = (Form_pg_class) GETSTRUCT(tup);
	if (form->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot maintain temporary table \"%s\"", NameStr(form->relname)),
				 errdetail("Changes made by other sessions could not reach it."),
				 errhint("Maintain a permanent or unlogged table.")));
	if (form->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot maintain \"%s\": it is not a plain table", NameStr(form->relname)),
				 errhint("Name a new table: gpudl_materialize creates it as a plain table.")));
	ReleaseSysCache(tup);
	if (!pg_class_ownercheck(target, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to maintain it", get_rel_name(target)),
				 errhint("The owner of the target decides what keeps it; ask them, or materialize into a table of your own.")));

	mp = gpudl_maint_plan_for(program, predicate, target, &version, NIL);
	check_base_tables(mp, program);
	SPI_connect();
	if (SPI_execute(psprintf("SELECT count(*) FROM %s", mp->target_sql), false, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not count the target's rows");
	{
		bool		isnull;

		rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	if (mp->incremental)
		gpudl_maint_ensure_indexes(mp);
	install_guard(target);
	foreach(lc, mp->base_relids)
		install_triggers(lfirst_oid(lc));
	write_entry(mp, program, predicate, GetUserId(), namespace_search_path, version, rows,
				ms_since(start));
	SPI_finish();
	return rows;
}

/*
 * Recompute a maintained target fully (gpudl_refresh, a rule edit, a
 * TRUNCATE, a target that is not incremental), acting as its maintainer:
 * the program's current rules, its current base tables (triggers follow
 * them).  as_change records it as a change, else as a refresh.  Returns the
 * rows.  The caller holds the entry's row lock or set it up.
 */
int64
gpudl_maint_refresh(Oid target, bool as_change, GpudlMaintStats *stats)
{
	instr_time	start;
	GpudlMaintEntry *e;
	GpudlMaintIdentity id;
	GpudlMaintPlan *mp;
	int64		version;
	int64		rows;
	List	   *unused = NIL;
	ListCell   *lc;
	GpudlMaintStats local = {0};
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext old;

	INSTR_TIME_SET_CURRENT(start);
	if (stats == NULL)
		stats = &local;
	SPI_connect();
	e = gpudl_maint_read_entry(target, true, CurrentMemoryContext);
	if (e == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" is not maintained", get_rel_name(target)),
				 errhint("Set it up with gpudl_materialize(program, predicate, target, mode => 'maintain').")));
	gpudl_maint_become_with_path(e->owner, e->search_path, &id);
	gpudl_maint_pending_done(target);	/* the recompute covers them */
	mp = gpudl_maint_plan_for(e->program, e->predicate, target, &version, NIL);
	check_base_tables(mp, e->program);
	gpudl_maint_writing_begin(target);
	rows = recompute_into(mp, stats);
	gpudl_maint_writing_end(target);
	if (mp->incremental)
		gpudl_maint_ensure_indexes(mp);
	install_guard(target);
	foreach(lc, mp->base_relids)
		install_triggers(lfirst_oid(lc));
	old = MemoryContextSwitchTo(caller);	/* used after SPI_finish */
	foreach(lc, e->base_relids)
		if (!list_member_oid(mp->base_relids, lfirst_oid(lc)))
			unused = lappend_oid(unused, lfirst_oid(lc));
	MemoryContextSwitchTo(old);
	gpudl_maint_restore(&id);
	write_entry(mp, e->program, e->predicate, e->owner, e->search_path, version, rows,
				ms_since(start));
	if (as_change)
		gpudl_maint_record_change(target, stats, ms_since(start), true);
	SPI_finish();
	if (unused != NIL)
		gpudl_maint_drop_unused_triggers(unused);
	return rows;
}

/*
 * After the rules or bindings of a program changed (its version was
 * bumped): recompute every target it maintains, so that they stay equal to
 * the derived relations in the same transaction.  Not while a dump is
 * restored (the catalog is loaded before the tables' rows).
 */
void
gpudl_maint_program_changed(const char *program)
{
	List	   *targets;
	ListCell   *lc;

	if (namespace_search_path[0] == '\0' || !gpudl_maint_catalog_present())
		return;
	SPI_connect();
	targets = oid_query("SELECT m.target::oid FROM gpudl.maintained_targets m "
						"JOIN gpudl.programs p ON p.name OPERATOR(pg_catalog.=) m.program "
						"WHERE m.program OPERATOR(pg_catalog.=) $1 ORDER BY 1",
						TEXTOID, CStringGetTextDatum(program), TopTransactionContext);
	SPI_finish();
	foreach(lc, targets)
		(void) gpudl_maint_refresh(lfirst_oid(lc), false, NULL);
}

/*
 * gpudl_materialize with mode 'replace' or 'append' into a maintained
 * target stops its maintenance (the target's owner may; others get the
 * permission error of writing it).  Targets of the same program that read
 * a predicate from it are refreshed: they derive it themselves again, and
 * their triggers follow.
 */
void
gpudl_maint_stop(Oid target)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(target)};
	GpudlMaintIdentity id;
	GpudlMaintEntry *e;
	List	   *readers = NIL;
	ListCell   *lc;

	if (!gpudl_maint_catalog_present())
		return;
	SPI_connect();
	e = gpudl_maint_read_entry(target, false, CurrentMemoryContext);
	if (e != NULL && pg_class_ownercheck(target, GetUserId()))
	{
		List	   *all = gpudl_maint_targets_of(target, TopTransactionContext);

		gpudl_maint_become(gpudl_catalog_owner(), &id);
		if (SPI_execute_with_args("DELETE FROM gpudl.maintained_targets WHERE target OPERATOR(pg_catalog.=) $1",
								  1, types, values, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "gpudl: could not stop maintaining a table");
		gpudl_maint_restore(&id);
		/* targets of the program that read the predicate from it derive it again */
		foreach(lc, all)
		{
			GpudlMaintEntry *r = gpudl_maint_read_entry(lfirst_oid(lc), false, CurrentMemoryContext);

			if (r != NULL && strcmp(r->program, e->program) == 0)
			{
				MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

				readers = lappend_oid(readers, lfirst_oid(lc));
				MemoryContextSwitchTo(old);
			}
		}
	}
	SPI_finish();
	foreach(lc, readers)
		(void) gpudl_maint_refresh(lfirst_oid(lc), false, NULL);
}

/*
 * gpudl_refresh(target regclass) RETURNS bigint: recompute a maintained
 * table fully; its owner (or a member of the owning role) may.
 */
Datum
gpudl_refresh(PG_FUNCTION_ARGS)
{
	Oid			target = PG_GETARG_OID(0);
	MemoryContext percall;
	MemoryContext old;
	int64		rows;

	gpudl_maint_require_catalog();
	if (!pg_class_ownercheck(target, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table %s to refresh it", get_rel_name(target))));
	gpudl_memory_reset();
	gpudl_install_host();
	percall = AllocSetContextCreate(CurrentMemoryContext, "gpudl refresh", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(percall);
	rows = gpudl_maint_refresh(target, false, NULL);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(percall);
	PG_RETURN_INT64(rows);
}
