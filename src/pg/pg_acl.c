/*
 * pg_acl.c — who may do what with a program: the privilege checks of gpudl,
 * in one place.
 *
 * Programs are modelled on PostgreSQL's own objects.  gpudl.programs.owner
 * (regrole) is the owner; gpudl.programs.acl (aclitem[], NULL = no grants)
 * holds the grants made with gpudl_grant, in PostgreSQL's own ACL format, so
 * PUBLIC and role membership work as for tables: 'use' is stored as USAGE
 * (U), 'modify' as UPDATE (w).  The owner, members of the owner role
 * (has_privs_of_role) and superusers may do everything; 'use' lets a role
 * read the rules, query and learn without commit; 'modify' also lets it
 * change rules and bindings and commit learned rules.  Dropping a program,
 * changing its owner or description and granting stay with the owner.
 *
 * The same predicate serves the C functions (refusals are 42501 with a hint
 * naming the owner) and the row-level security policies of the catalog
 * tables (gpudl._acl_allows).  A catalog created by gpudl 0.1 and not yet
 * updated has no owner column: then nothing is checked, as in 0.1.
 */
#include "pg/gpudl_pg.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(gpudl_acl_allows);

/* The OID of gpudl.programs, or InvalidOid when the catalog is missing. */
static Oid
programs_relid(void)
{
	Oid			nsp = get_namespace_oid("gpudl", true);

	return OidIsValid(nsp) ? get_relname_relid("programs", nsp) : InvalidOid;
}

/*
 * Does the catalog have owners (gpudl 0.2 or later)?  The library may run
 * against a 0.1 catalog between CREATE EXTENSION ... VERSION '0.1' and
 * ALTER EXTENSION gpudl UPDATE; there everything is PUBLIC, as it was.
 */
bool
gpudl_catalog_has_owners(void)
{
	Oid			relid = programs_relid();

	return OidIsValid(relid) && get_attnum(relid, "owner") != InvalidAttrNumber;
}

/*
 * The role owning gpudl's catalog tables (the extension's owner).  It
 * bypasses row-level security on them, as a table owner does; the version
 * bump after a permitted change runs as this role (pg_catalog.c).
 */
Oid
gpudl_catalog_owner(void)
{
	Oid			relid = programs_relid();

	if (!OidIsValid(relid))
		elog(ERROR, "gpudl: catalog table gpudl.programs is missing");
	return gpudl_rel_owner(relid);
}

/* The role owning a relation. */
Oid
gpudl_rel_owner(Oid relid)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/* The ACL bits a privilege needs (any of them suffices). */
static AclMode
privilege_bits(GpudlPrivilege need)
{
	switch (need)
	{
		case GPUDL_PRIV_USE:
			return ACL_USAGE | ACL_UPDATE;	/* 'modify' implies 'use' */
		case GPUDL_PRIV_MODIFY:
			return ACL_UPDATE;
		default:
			return ACL_NO_RIGHTS;
	}
}

/*
 * May roleid do what 'need' asks on a program of this owner and ACL (NULL:
 * no grants)?  Ownership: has_privs_of_role(roleid, owner), which is true
 * for superusers and members (with INHERIT) of the owner role.  Grants:
 * PostgreSQL's aclmask, so PUBLIC and grants to a role roleid belongs to
 * count.
 */
bool
gpudl_privilege_allows(Oid owner, Acl *acl, GpudlPrivilege need, Oid roleid)
{
	if (need == GPUDL_PRIV_NONE)
		return true;
	if (superuser_arg(roleid) || (OidIsValid(owner) && has_privs_of_role(roleid, owner)))
		return true;
	if (need == GPUDL_PRIV_OWN || acl == NULL)
		return false;
	return aclmask(acl, roleid, owner, privilege_bits(need), ACLMASK_ANY) != 0;
}

/* A role's name for messages: its name, or its OID when it was dropped. */
char *
gpudl_role_name(Oid roleid)
{
	char	   *name = OidIsValid(roleid) ? GetUserNameFromId(roleid, true) : NULL;

	return name ? name : psprintf("%u", roleid);
}

/*
 * Raise 42501 unless the current user may do what 'need' asks on the
 * program.  The hint names the owner and what to ask for.
 */
void
gpudl_privilege_require(const char *program, Oid owner, Acl *acl, GpudlPrivilege need)
{
	Oid			me = GetUserId();
	char	   *oname;
	char	   *mine;

	if (gpudl_privilege_allows(owner, acl, need, me))
		return;
	oname = gpudl_role_name(owner);
	mine = gpudl_role_name(me);
	if (need == GPUDL_PRIV_OWN)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of gpudl program \"%s\"", program),
				 errhint("Program \"%s\" is owned by %s; only %s (or a member of %s, or a superuser) "
						 "may drop it, change its owner or description, or grant privileges on it.",
						 program, oname, oname, oname)));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 need == GPUDL_PRIV_USE ?
			 errmsg("permission denied to use gpudl program \"%s\"", program) :
			 errmsg("permission denied to change gpudl program \"%s\"", program),
			 errhint("Program \"%s\" is owned by %s; ask %s (or a superuser) to run "
					 "gpudl_grant('%s', '%s', '%s').",
					 program, oname, oname, program, mine,
					 need == GPUDL_PRIV_USE ? "use" : "modify")));
}

/*
 * Raise 42501 unless the current user may read the columns of relid that a
 * binding names (all of them when columns is NIL): gpudl reads tables with
 * the caller's rights, and a binding must not point at a table its author
 * could not read.  A relation that does not exist is left to the caller.
 */
void
gpudl_require_readable(Oid relid, List *columns, const char *program, const char *predicate)
{
	Oid			me = GetUserId();
	char	   *relname = get_rel_name(relid);
	bool		ok;

	if (relname == NULL)
		return;
	if (pg_class_aclcheck(relid, me, ACL_SELECT) == ACLCHECK_OK)
		return;
	if (columns == NIL)
		ok = pg_attribute_aclcheck_all(relid, me, ACL_SELECT, ACLMASK_ALL) == ACLCHECK_OK;
	else
	{
		ListCell   *lc;

		ok = true;
		foreach(lc, columns)
		{
			AttrNumber	att = get_attnum(relid, (const char *) lfirst(lc));

			if (att == InvalidAttrNumber)
				return;			/* the analysis reports the missing column */
			if (pg_attribute_aclcheck(relid, att, me, ACL_SELECT) != ACLCHECK_OK)
				ok = false;
		}
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", relname),
				 errdetail("Predicate \"%s\" of gpudl program \"%s\" would be bound to it.",
						   predicate, program),
				 errhint("gpudl reads tables with the caller's rights; bind only tables you may SELECT.")));
}

/* Parse a privilege name of the policies: 'own', 'use' or 'modify'. */
static GpudlPrivilege
policy_privilege(const char *s)
{
	static const GpudlKeyword privileges[] = {
		{"use", GPUDL_PRIV_USE}, {"modify", GPUDL_PRIV_MODIFY}, {"own", GPUDL_PRIV_OWN}, {NULL, 0}
	};

	return (GpudlPrivilege) gpudl_keyword(s, privileges, "unknown gpudl privilege \"%s\"",
										  "Use 'own', 'use' or 'modify'.");
}

/*
 * gpudl._acl_allows(owner regrole, acl aclitem[], privilege text): the
 * predicate of the catalog's row-level security policies, for the current
 * user.  NULL owner: false.
 */
Datum
gpudl_acl_allows(PG_FUNCTION_ARGS)
{
	Oid			owner;
	Acl		   *acl;
	GpudlPrivilege need;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		PG_RETURN_BOOL(false);
	owner = PG_GETARG_OID(0);
	acl = PG_ARGISNULL(1) ? NULL : DatumGetAclP(PG_GETARG_DATUM(1));
	need = policy_privilege(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	PG_RETURN_BOOL(gpudl_privilege_allows(owner, acl, need, GetUserId()));
}
