/*
 * api_grant.c — gpudl_grant(program, role, privilege) and
 * gpudl_revoke(program, role, privilege): the GRANT and REVOKE of programs.
 *
 * Grants live in gpudl.programs.acl, an aclitem[] like pg_class.relacl
 * (NULL when there are none), with the owner as grantor: 'use' is USAGE
 * (U), 'modify' is UPDATE (w).  Granting 'modify' grants 'use' with it;
 * revoking 'use' revokes 'modify' too (a role that cannot read a program
 * cannot change it), revoking 'modify' leaves 'use'.  Only the owner (its
 * members, superusers) may grant or revoke.  PUBLIC as the role grants to
 * every role.  The role is given as a name (text, so PUBLIC can be named)
 * or as a regrole (an overload with the same C function).  Checks happen at
 * every call, so a revoke takes effect at once in every session.
 */
#include "pg/gpudl_pg.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(gpudl_grant);
PG_FUNCTION_INFO_V1(gpudl_revoke);

/*
 * The ACL bits of a privilege name: 'use' (or 'usage'), 'modify' (or
 * 'all'), any case.  What a grant adds and a revoke removes differ, as the
 * file comment says.
 */
static AclMode
privilege_mask(const char *priv, bool is_grant)
{
	if (pg_strcasecmp(priv, "use") == 0 || pg_strcasecmp(priv, "usage") == 0)
		return is_grant ? ACL_USAGE : (ACL_USAGE | ACL_UPDATE);
	if (pg_strcasecmp(priv, "modify") == 0)
		return is_grant ? (ACL_USAGE | ACL_UPDATE) : ACL_UPDATE;
	if (pg_strcasecmp(priv, "all") == 0)
		return ACL_USAGE | ACL_UPDATE;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown privilege \"%s\" for a gpudl program", priv),
			 errhint("Use 'use' (read its rules, query, learn without commit) or 'modify' "
					 "(also change its rules and bindings and commit learned rules).")));
	return ACL_NO_RIGHTS;		/* keep the compiler quiet */
}

/*
 * The grantee, argument 1: a regrole, or a name — PUBLIC (any case) or an
 * existing role (42704 otherwise).
 */
static Oid
grantee_oid(FunctionCallInfo fcinfo)
{
	char	   *role;

	if (get_fn_expr_argtype(fcinfo->flinfo, 1) == REGROLEOID)
	{
		if (PG_ARGISNULL(1) || !OidIsValid(PG_GETARG_OID(1)))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("role must not be null")));
		return PG_GETARG_OID(1);
	}
	role = gpudl_text_arg(fcinfo, 1, "role");
	if (pg_strcasecmp(role, "public") == 0)
		return ACL_ID_PUBLIC;
	return get_role_oid(role, false);
}

/* Grant or revoke: read the program row locked, check ownership, update the ACL. */
static void
change_acl(FunctionCallInfo fcinfo, bool is_grant)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	Oid			grantee = grantee_oid(fcinfo);
	char	   *priv = gpudl_text_arg(fcinfo, 2, "privilege");
	AclMode		mask = privilege_mask(priv, is_grant);
	Oid			argtypes[2] = {TEXTOID, ACLITEMARRAYOID};
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Oid			owner;
	Datum		d;
	Acl		   *old_acl;
	Acl		   *new_acl;
	AclItem		item;

	if (!gpudl_catalog_has_owners())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the gpudl catalog has no owners yet"),
				 errhint("Run ALTER EXTENSION gpudl UPDATE.")));
	values[0] = CStringGetTextDatum(program);
	SPI_connect();
	if (SPI_execute_with_args("SELECT owner::oid, acl FROM gpudl.programs WHERE name = $1 FOR UPDATE",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "gpudl: could not read program \"%s\"", program);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("gpudl program \"%s\" does not exist", program),
				 errhint("Create it with gpudl_create_program().")));
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	owner = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
	d = SPI_getbinval(tup, desc, 2, &isnull);
	old_acl = isnull ? make_empty_acl() : DatumGetAclPCopy(d);
	gpudl_privilege_require(program, owner, isnull ? NULL : old_acl, GPUDL_PRIV_OWN);

	item.ai_grantee = grantee;
	item.ai_grantor = owner;
	ACLITEM_SET_PRIVS_GOPTIONS(item, mask, ACL_NO_RIGHTS);
	new_acl = aclupdate(old_acl, &item, is_grant ? ACL_MODECHG_ADD : ACL_MODECHG_DEL,
						owner, DROP_RESTRICT);
	if (ACL_NUM(new_acl) == 0)
	{
		values[1] = (Datum) 0;
		nulls[1] = 'n';			/* no grants left: NULL, as before the first */
	}
	else
		values[1] = PointerGetDatum(new_acl);
	if (SPI_execute_with_args("UPDATE gpudl.programs SET acl = $2 WHERE name = $1",
							  2, argtypes, values, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "gpudl: could not update the privileges of program \"%s\"", program);
	SPI_finish();
}

/* gpudl_grant(program, role, privilege): let a role (or PUBLIC) use or modify a program. */
Datum
gpudl_grant(PG_FUNCTION_ARGS)
{
	change_acl(fcinfo, true);
	PG_RETURN_VOID();
}

/* gpudl_revoke(program, role, privilege): take a grant back. */
Datum
gpudl_revoke(PG_FUNCTION_ARGS)
{
	change_acl(fcinfo, false);
	PG_RETURN_VOID();
}
