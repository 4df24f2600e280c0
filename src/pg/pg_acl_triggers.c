/*
 * pg_acl_triggers.c — ownership and privileges under direct DML on the
 * catalog.
 *
 * Row-level security policies on gpudl.programs, gpudl.rules and
 * gpudl.bindings (sql/gpudl--0.1--0.2.sql) hide the rules and bindings of
 * programs a role may not use and refuse rows it may not write.  But a
 * policy can only filter rows silently or fail with a generic message, so
 * these BEFORE ROW triggers refuse a change to a row the role can see with
 * 42501, naming the program and its owner, the same error as the gpudl_*
 * functions give:
 *   - gpudl.programs: inserting a program owned by another role, and
 *     updating or deleting a program, need ownership (pg_acl.c);
 *   - gpudl.rules, gpudl.bindings: any change needs 'modify' on the program
 *     of the old and the new row; a binding must name a table the role may
 *     read.
 * The catalog's owner and superusers are not checked (they bypass the
 * policies too); nor are the writes of gpudl_* functions, which check
 * before writing (gpudl_catalog_write_depth).
 */
#include "pg/gpudl_pg.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(gpudl_programs_check);
PG_FUNCTION_INFO_V1(gpudl_program_row_check);

/* Make sure we are called as a BEFORE ROW trigger. */
static TriggerData *
row_trigger_data(FunctionCallInfo fcinfo, const char *fname)
{
	TriggerData *td;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be called as a trigger", fname)));
	td = (TriggerData *) fcinfo->context;
	if (!TRIGGER_FIRED_BEFORE(td->tg_event) || !TRIGGER_FIRED_FOR_ROW(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be a BEFORE ROW trigger", fname)));
	return td;
}

/* The row the trigger returns: NEW for INSERT/UPDATE, OLD for DELETE. */
static Datum
trigger_result(TriggerData *td)
{
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return PointerGetDatum(td->tg_newtuple);
	return PointerGetDatum(td->tg_trigtuple);
}

/* Is the current role exempt from the checks (superuser, catalog owner)? */
static bool
exempt_role(void)
{
	return superuser() || has_privs_of_role(GetUserId(), gpudl_catalog_owner());
}

/* A text column of a row as a C string, NULL when null. */
static char *
text_column(HeapTuple tup, TupleDesc desc, const char *col)
{
	bool		isnull;
	Datum		d = heap_getattr(tup, SPI_fnumber(desc, col), desc, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* Owner and ACL of a gpudl.programs row. */
static void
program_owner_acl(HeapTuple tup, TupleDesc desc, Oid *owner, Acl **acl)
{
	bool		isnull;
	Datum		d = heap_getattr(tup, SPI_fnumber(desc, "owner"), desc, &isnull);

	*owner = isnull ? InvalidOid : DatumGetObjectId(d);
	d = heap_getattr(tup, SPI_fnumber(desc, "acl"), desc, &isnull);
	*acl = isnull ? NULL : DatumGetAclP(d);
}

/*
 * BEFORE INSERT OR UPDATE OR DELETE on gpudl.programs: ownership, checked
 * like PostgreSQL checks ALTER ... OWNER and DROP.  A new program must be
 * owned by the role creating it (or a role it has the privileges of); an
 * update or delete needs ownership of the row; giving a program to another
 * role needs the privileges of that role too.
 */
Datum
gpudl_programs_check(PG_FUNCTION_ARGS)
{
	TriggerData *td = row_trigger_data(fcinfo, "gpudl_programs_check");
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	Oid			me = GetUserId();
	Oid			owner;
	Acl		   *acl;
	char	   *name;

	if (exempt_role())
		return trigger_result(td);
	name = text_column(td->tg_trigtuple, desc, "name");
	program_owner_acl(td->tg_trigtuple, desc, &owner, &acl);
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
	{
		if (!OidIsValid(owner) || !gpudl_privilege_allows(owner, NULL, GPUDL_PRIV_OWN, me))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to create gpudl program \"%s\" owned by %s",
							name ? name : "", gpudl_role_name(owner)),
					 errhint("A program is owned by the role creating it, or by a role whose privileges it has.")));
		return trigger_result(td);
	}
	/* UPDATE or DELETE: the old row's owner decides */
	gpudl_privilege_require(name ? name : "", owner, acl, GPUDL_PRIV_OWN);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		Oid			new_owner;
		Acl		   *new_acl;

		program_owner_acl(td->tg_newtuple, desc, &new_owner, &new_acl);
		if (new_owner != owner &&
			(!OidIsValid(new_owner) || !gpudl_privilege_allows(new_owner, NULL, GPUDL_PRIV_OWN, me)))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to give gpudl program \"%s\" to %s",
							name ? name : "", gpudl_role_name(new_owner)),
					 errhint("Give programs only to roles whose privileges you have, as ALTER ... OWNER TO requires.")));
	}
	return trigger_result(td);
}

/* The column names of a bindings row's columns array (NIL when null). */
static List *
binding_columns(HeapTuple tup, TupleDesc desc)
{
	bool		isnull;
	Datum		d = heap_getattr(tup, SPI_fnumber(desc, "columns"), desc, &isnull);
	List	   *cols = NIL;
	Datum	   *elems;
	bool	   *nulls;
	int			n,
				k;

	if (isnull)
		return NIL;
	deconstruct_array(DatumGetArrayTypeP(d), NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &elems, &nulls, &n);
	for (k = 0; k < n; k++)
		if (!nulls[k])
			cols = lappend(cols, pstrdup(NameStr(*DatumGetName(elems[k]))));
	return cols;
}

/* Check a gpudl.bindings row: its table must be readable by the caller. */
static void
check_binding_readable(HeapTuple tup, TupleDesc desc)
{
	bool		isnull;
	Datum		rel = heap_getattr(tup, SPI_fnumber(desc, "relation"), desc, &isnull);
	char	   *program = text_column(tup, desc, "program");
	char	   *predicate = text_column(tup, desc, "predicate");

	if (!isnull)
		gpudl_require_readable(DatumGetObjectId(rel), binding_columns(tup, desc),
							   program ? program : "", predicate ? predicate : "");
}

/*
 * BEFORE INSERT OR UPDATE OR DELETE on gpudl.rules and gpudl.bindings: the
 * caller needs 'modify' on the program of the old and the new row (42501,
 * naming the owner).  A row naming a missing program is left to the foreign
 * key.  A new or changed binding must point at a table the caller may read.
 */
Datum
gpudl_program_row_check(PG_FUNCTION_ARGS)
{
	TriggerData *td = row_trigger_data(fcinfo, "gpudl_program_row_check");
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	bool		is_bindings = strcmp(RelationGetRelationName(td->tg_relation), "bindings") == 0;
	char	   *program;

	if (gpudl_catalog_write_depth > 0 || exempt_role())
		return trigger_result(td);
	program = text_column(td->tg_trigtuple, desc, "program");
	if (program)
		(void) gpudl_program_version(program, GPUDL_PRIV_MODIFY, true, NULL);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		char	   *new_program = text_column(td->tg_newtuple, desc, "program");

		if (new_program && (program == NULL || strcmp(new_program, program) != 0))
			(void) gpudl_program_version(new_program, GPUDL_PRIV_MODIFY, true, NULL);
	}
	if (is_bindings && !TRIGGER_FIRED_BY_DELETE(td->tg_event))
		check_binding_readable(TRIGGER_FIRED_BY_UPDATE(td->tg_event) ?
							   td->tg_newtuple : td->tg_trigtuple, desc);
	return trigger_result(td);
}
