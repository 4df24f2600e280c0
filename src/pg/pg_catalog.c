/*
 * pg_catalog.c — gpudl's catalog tables seen from C: reading a program's
 * rules and bindings, parsing them, resolving extensional predicates to
 * tables (bindings first, then search_path) and validating a stored program
 * as a whole.
 *
 * Catalog reads go through SPI with the caller's rights (row-level security
 * hides the rules of programs the caller may not use, so every read checks
 * the privilege first and refuses with 42501); results are built in the
 * caller's memory context, never in SPI's.
 */
#include "pg/gpudl_pg.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

int			gpudl_catalog_write_depth = 0;

/* Error context: which stored rule was being parsed. */
static void
rule_error_context(void *arg)
{
	errcontext("%s", (const char *) arg);
}

/* Parse a source text with an error context naming where it came from. */
GdlProgram *
gpudl_parse_text(const char *text, const char *context)
{
	ErrorContextCallback cb;
	GdlProgram *prog;

	cb.callback = rule_error_context;
	cb.arg = (void *) context;
	cb.previous = error_context_stack;
	if (context)
		error_context_stack = &cb;
	gpudl_install_host();
	prog = gdl_parse(text);
	if (context)
		error_context_stack = cb.previous;
	return prog;
}

/*
 * Run a one-parameter text query through SPI.  Reads are not read_only on
 * purpose: SPI then takes a fresh snapshot, so the catalog triggers see the
 * rows of the statement that fired them.
 */
static void
spi_exec_text(const char *sql, const char *param, bool read_only)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	int			rc;

	values[0] = CStringGetTextDatum(param);
	rc = SPI_execute_with_args(sql, 1, argtypes, values, NULL, read_only, 0);
	if (rc < 0)
		elog(ERROR, "gpudl: catalog query failed: %s", SPI_result_code_string(rc));
}

/*
 * The version of a program, after checking that the current user may do
 * 'need' with it; raise 42704 when missing unless missing_ok.  Program rows
 * are readable by every role (like pg_class), so this sees the owner and
 * ACL of any program, and a refusal can name the owner.
 */
int64
gpudl_program_version(const char *name, GpudlPrivilege need, bool missing_ok, bool *found)
{
	int64		version = 0;
	bool		isnull;
	bool		owners = gpudl_catalog_has_owners();

	SPI_connect();
	spi_exec_text(owners ? "SELECT version, owner::oid, acl FROM gpudl.programs WHERE name = $1" :
				  "SELECT version FROM gpudl.programs WHERE name = $1", name, false);
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		version = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		if (owners && need != GPUDL_PRIV_NONE)
		{
			Oid			owner = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
			Datum		acl = SPI_getbinval(tup, desc, 3, &isnull);

			gpudl_privilege_require(name, owner, isnull ? NULL : DatumGetAclP(acl), need);
		}
	}
	if (found)
		*found = SPI_processed > 0;
	if (SPI_processed == 0 && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("gpudl program \"%s\" does not exist", name),
				 errhint("Create it with gpudl_create_program().")));
	SPI_finish();
	return version;
}

/* Raise 42704 unless the program exists, 42501 unless the caller may do 'need'. */
void
gpudl_require_program(const char *name, GpudlPrivilege need)
{
	(void) gpudl_program_version(name, need, false, NULL);
}

GpudlProgramChangedHook gpudl_program_changed_hook = NULL;

/*
 * Bump a program's version: compiled plans of the old version go stale.
 * Called after a change the caller was allowed to make (a role granted
 * 'modify' changes rules but may not update the program row itself), so
 * the update runs as the catalog's owner, the way PostgreSQL's foreign-key
 * triggers act as the table owner; only this statement does.
 */
void
gpudl_bump_version(const char *name)
{
	Oid			save_userid;
	int			save_sec;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(gpudl_catalog_owner(),
						   save_sec | SECURITY_LOCAL_USERID_CHANGE | SECURITY_NOFORCE_RLS);
	SPI_connect();
	spi_exec_text("UPDATE gpudl.programs SET version = version OPERATOR(pg_catalog.+) 1, "
				  "updated_at = pg_catalog.now() WHERE name OPERATOR(pg_catalog.=) $1", name, false);
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec);
	if (gpudl_program_changed_hook)
		gpudl_program_changed_hook(name);
}

/* Load a program's enabled rules (parsed) and its bindings. */
GpudlProgramDef *
gpudl_load_program(const char *name)
{
	MemoryContext caller = CurrentMemoryContext;
	GpudlProgramDef *def = palloc0(sizeof(GpudlProgramDef));
	uint64		i;

	def->name = pstrdup(name);
	def->version = gpudl_program_version(name, GPUDL_PRIV_USE, false, NULL);
	def->prog = gdl_alloc(sizeof(GdlProgram));

	SPI_connect();
	spi_exec_text("SELECT id, rule FROM gpudl.rules WHERE program = $1 AND enabled "
				  "ORDER BY id", name, false);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		char	   *text = SPI_getvalue(tup, SPI_tuptable->tupdesc, 2);
		MemoryContext old = MemoryContextSwitchTo(caller);
		char	   *ctx = psprintf("gpudl rule %lld of program \"%s\"", (long long) id, name);
		GdlProgram *one = gpudl_parse_text(text, ctx);
		int			k;

		for (k = 0; k < one->nitems; k++)
			one->items[k].rule_id = id;
		gdl_program_append(def->prog, one);
		MemoryContextSwitchTo(old);
	}

	spi_exec_text("SELECT predicate, relation::oid, columns::text[] FROM gpudl.bindings "
				  "WHERE program = $1 ORDER BY predicate COLLATE pg_catalog.\"C\"", name, false);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		cols;
		MemoryContext old = MemoryContextSwitchTo(caller);
		GpudlBinding *b = palloc0(sizeof(GpudlBinding));

		b->predicate = SPI_getvalue(tup, desc, 1);
		b->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
		cols = SPI_getbinval(tup, desc, 3, &isnull);
		if (!isnull)
		{
			Datum	   *elems;
			bool	   *nulls;
			int			n,
						k;

			deconstruct_array(DatumGetArrayTypeP(cols), TEXTOID, -1, false,
							  TYPALIGN_INT, &elems, &nulls, &n);
			for (k = 0; k < n; k++)
				b->columns = lappend(b->columns, TextDatumGetCString(elems[k]));
		}
		def->bindings = lappend(def->bindings, b);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return def;
}

/* Find the binding of a predicate, or NULL. */
static GpudlBinding *
find_binding(GpudlProgramDef *def, const char *pred)
{
	ListCell   *lc;

	foreach(lc, def->bindings)
	{
		GpudlBinding *b = lfirst(lc);

		if (strcmp(b->predicate, pred) == 0)
			return b;
	}
	return NULL;
}

/*
 * Look a relation up by "name" or "schema.name" on search_path.  A name
 * with a dot is schema.table first; when there is no such table, the whole
 * name is a table name on search_path (a table named "a.b").  The plan
 * cache's current_relid does the same.
 */
Oid
gpudl_lookup_pred_relation(const char *name)
{
	const char *dot = strchr(name, '.');
	Oid			relid;

	if (dot)
	{
		char	   *schema = pnstrdup(name, dot - name);

		/* as before: RangeVarGetRelid checks USAGE on the schema */
		if (OidIsValid(get_namespace_oid(schema, true)))
		{
			relid = RangeVarGetRelid(makeRangeVar(schema, pstrdup(dot + 1), -1), NoLock, true);
			if (OidIsValid(relid))
				return relid;
		}
	}
	return RangeVarGetRelid(makeRangeVar(NULL, pstrdup(name), -1), NoLock, true);
}

/* Look a relation up for a predicate name (see gpudl_lookup_pred_relation). */
static Oid
lookup_relation(const char *name)
{
	return gpudl_lookup_pred_relation(name);
}

/* Describe the columns of relid (all, or the named ones) for the core. */
static void
describe_relation(Oid relid, List *columns, const char *pred, GdlRelInfo *out)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	char		kind = rel->rd_rel->relkind;
	int			n = 0;
	int			i;

	if (kind != RELKIND_RELATION && kind != RELKIND_VIEW && kind != RELKIND_MATVIEW &&
		kind != RELKIND_FOREIGN_TABLE && kind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table, view or materialized view",
						RelationGetRelationName(rel)),
				 errdetail("Predicate \"%s\" must read a table.", pred)));

	out->relid = relid;
	out->display_name = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												   RelationGetRelationName(rel));
	out->types = palloc0(sizeof(GdlType) * (desc->natts + 1));
	out->colnames = palloc0(sizeof(char *) * (desc->natts + 1));
	out->typnames = palloc0(sizeof(char *) * (desc->natts + 1));
	if (columns != NIL)
	{
		ListCell   *lc;

		out->types = repalloc(out->types, sizeof(GdlType) * list_length(columns));
		out->colnames = repalloc(out->colnames, sizeof(char *) * list_length(columns));
		out->typnames = repalloc(out->typnames, sizeof(char *) * list_length(columns));
		foreach(lc, columns)
		{
			const char *col = lfirst(lc);
			AttrNumber	att = InvalidAttrNumber;

			for (i = 0; i < desc->natts; i++)
			{
				Form_pg_attribute a = TupleDescAttr(desc, i);

				if (!a->attisdropped && strcmp(NameStr(a->attname), col) == 0)
					att = a->attnum;
			}
			if (att == InvalidAttrNumber)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" of relation \"%s\" does not exist",
								col, RelationGetRelationName(rel)),
						 errdetail("Predicate \"%s\" is bound to these columns.", pred)));
			out->colnames[n] = pstrdup(col);
			out->types[n] = gpudl_type_from_oid(TupleDescAttr(desc, att - 1)->atttypid);
			out->typnames[n] = format_type_be(TupleDescAttr(desc, att - 1)->atttypid);
			n++;
		}
	}
	else
	{
		for (i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(desc, i);

			if (a->attisdropped)
				continue;
			out->colnames[n] = pstrdup(NameStr(a->attname));
			out->types[n] = gpudl_type_from_oid(a->atttypid);
			out->typnames[n] = format_type_be(a->atttypid);
			n++;
		}
	}
	out->ncols = n;
	relation_close(rel, NoLock);
}

/* Resolver callback for gdl_analyze: bindings, then search_path. */
bool
gpudl_resolve_predicate(void *arg, const char *name, GdlRelInfo *out)
{
	GpudlProgramDef *def = arg;
	GpudlBinding *b = find_binding(def, name);
	Oid			relid;

	if (b)
	{
		if (!OidIsValid(b->relid) || !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(b->relid)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("the table bound to predicate \"%s\" of program \"%s\" no longer exists",
							name, def->name),
					 errhint("Bind the predicate again with gpudl_bind().")));
		describe_relation(b->relid, b->columns, name, out);
		return true;
	}
	relid = lookup_relation(name);
	if (!OidIsValid(relid))
		return false;
	describe_relation(relid, NIL, name, out);
	return true;
}

/*
 * A bound table that no rule of the analysis reads, as the extensional
 * predicate it would be (id -1, the arity and types of its table): what
 * learning and mining read besides the predicates of the rules.  False when
 * the analysis has the predicate or its table does not resolve.
 */
bool
gpudl_unread_binding(GpudlProgramDef *def, const GdlAnalysis *a,
					 const GpudlBinding *b, GdlPred *p)
{
	if (gdl_analysis_find_pred(a, b->predicate) >= 0)
		return false;
	memset(p, 0, sizeof(*p));
	p->name = b->predicate;
	p->is_edb = true;
	p->id = -1;
	if (!gpudl_resolve_predicate(def, b->predicate, &p->rel))
		return false;
	p->arity = p->rel.ncols;
	p->types = p->rel.types;
	return true;
}

/* Analyse a loaded program; bound predicates must be extensional. */
GdlAnalysis *
gpudl_analyze_program(GpudlProgramDef *def)
{
	GdlAnalysis *a;
	ListCell   *lc;

	gpudl_install_host();
	a = gdl_analyze(def->prog, gpudl_resolve_predicate, def);
	foreach(lc, def->bindings)
	{
		GpudlBinding *b = lfirst(lc);
		int			p = gdl_analysis_find_pred(a, b->predicate);

		if (p >= 0 && !a->preds[p].is_edb)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("predicate \"%s\" of program \"%s\" is defined by rules and cannot be bound to a table",
							b->predicate, def->name),
					 errhint("Bind only predicates that no rule defines, or rename the derived predicate.")));
	}
	return a;
}

/* Validate a stored program as a whole; used after catalog changes. */
void
gpudl_validate_stored_program(const char *name)
{
	bool		found;
	GpudlProgramDef *def;

	(void) gpudl_program_version(name, GPUDL_PRIV_NONE, true, &found);
	if (!found)
		return;					/* dropped in the same statement */
	def = gpudl_load_program(name);
	(void) gpudl_analyze_program(def);
}
