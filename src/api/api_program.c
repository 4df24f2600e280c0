/*
 * api_program.c — SQL functions that manage programs as data:
 * gpudl_create_program, gpudl_add_rules, gpudl_drop_program, gpudl_bind and
 * gpudl_explain.
 *
 * Every change is validated as a whole program before anything is written,
 * so a failed call leaves the catalog as it was; the catalog triggers
 * (pg_triggers.c) then bump the program's version.  Privileges (pg_acl.c)
 * are checked first: changing rules or bindings needs 'modify', dropping
 * needs ownership, and a refusal writes nothing.
 */
#include "pg/gpudl_pg.h"
#include "pg/gpudl_run.h"
#include "exec/gdl_engine.h"
#include "pg/gpudl_learn.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(gpudl_create_program);
PG_FUNCTION_INFO_V1(gpudl_add_rules);
PG_FUNCTION_INFO_V1(gpudl_drop_program);
PG_FUNCTION_INFO_V1(gpudl_bind);
PG_FUNCTION_INFO_V1(gpudl_explain);

/*
 * An SPI parameter from a nullable argument of the SQL function: its Datum,
 * or a NULL ('n') when the argument is NULL (a description, the columns of
 * a binding).
 */
static void
spi_arg(FunctionCallInfo fcinfo, int argno, Datum *value, char *null)
{
	if (PG_ARGISNULL(argno))
	{
		*value = (Datum) 0;
		*null = 'n';
	}
	else
		*value = PG_GETARG_DATUM(argno);
}

/*
 * Insert the items of a parsed text as rows of gpudl.rules in ONE statement
 * (so the catalog triggers validate and bump the version once); return the
 * new ids in source order.
 */
static List *
insert_rules(const char *program, GdlProgram *prog, bool learned)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *ids = NIL;
	Oid			argtypes[4] = {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, BOOLOID};
	Datum		values[4];
	Datum	   *rules = palloc(sizeof(Datum) * (prog->nitems + 1));
	Datum	   *heads = palloc(sizeof(Datum) * (prog->nitems + 1));
	uint64		i;

	for (i = 0; i < prog->nitems; i++)
	{
		GdlItem    *item = &prog->items[i];

		rules[i] = CStringGetTextDatum(item->kind == GDL_ITEM_CLAUSE ?
									   item->clause->text : item->decl->text);
		heads[i] = CStringGetTextDatum(gdl_item_head(item));
	}
	values[0] = CStringGetTextDatum(program);
	values[1] = PointerGetDatum(construct_array(rules, prog->nitems, TEXTOID, -1, false, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(heads, prog->nitems, TEXTOID, -1, false, TYPALIGN_INT));
	values[3] = BoolGetDatum(learned);

	SPI_connect();
	/* no row limit: it would stop ModifyTable before its statement triggers */
	if (SPI_execute_with_args("INSERT INTO gpudl.rules(program, rule, head, learned) "
							  "SELECT $1, u.r, u.h, $4 FROM unnest($2, $3) WITH ORDINALITY AS u(r, h, o) "
							  "ORDER BY u.o RETURNING id",
							  4, argtypes, values, NULL, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "gpudl: could not insert rules");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		MemoryContext old = MemoryContextSwitchTo(caller);

		ids = lappend(ids, (void *) (intptr_t) id);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	/* RETURNING gives rows in insertion order, which follows ORDER BY */
	return ids;
}

/*
 * Parse new rules for a program and validate the program they would make,
 * raising before anything is written.
 */
static GdlProgram *
validate_new_rules(const char *program, const char *rules, bool existing)
{
	GdlProgram *added = gpudl_parse_text(rules, NULL);
	GpudlProgramDef *def;

	if (existing)
		def = gpudl_load_program(program);
	else
	{
		def = palloc0(sizeof(GpudlProgramDef));
		def->name = pstrdup(program);
		def->prog = gdl_alloc(sizeof(GdlProgram));
	}
	gdl_program_append(def->prog, added);
	(void) gpudl_analyze_program(def);
	return added;
}

/* Insert rules with the catalog triggers' whole-program validation skipped. */
static List *
insert_validated_rules(const char *program, GdlProgram *prog, bool learned)
{
	List	   *ids;

	gpudl_catalog_write_depth++;
	PG_TRY();
	{
		ids = insert_rules(program, prog, learned);
	}
	PG_FINALLY();
	{
		gpudl_catalog_write_depth--;
	}
	PG_END_TRY();
	return ids;
}

/*
 * Validate and insert clauses into an existing program (learned marks them
 * as induced); returns the new ids.  A text without clauses is an error,
 * with a hint on how clauses end when the user wrote it (gpudl_add_rules).
 */
static List *
insert_rules_text(const char *program, const char *rules, bool learned, bool hint)
{
	GdlProgram *prog;

	gpudl_require_program(program, GPUDL_PRIV_MODIFY);
	prog = validate_new_rules(program, rules, true);
	if (prog->nitems == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no rules, facts or declarations found in the text"),
				 hint ? errhint("Each clause ends with a period, e.g. \"p(X) :- q(X).\"") : 0));
	return insert_validated_rules(program, prog, learned);
}

/*
 * insert_rules_text for gpudl_commit_rule and gpudl_learn(commit => true),
 * without the hint.
 */
List *
gpudl_insert_rules_text(const char *program, const char *rules, bool learned)
{
	return insert_rules_text(program, rules, learned, false);
}

/*
 * gpudl_create_program(name, rules, description): a new program, with its
 * rules validated first.  Returns the name.
 */
Datum
gpudl_create_program(PG_FUNCTION_ARGS)
{
	char	   *name = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *rules = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	GdlProgram *prog = NULL;
	bool		found;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	char		nulls[2] = {' ', ' '};

	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("program name must not be empty")));
	(void) gpudl_program_version(name, GPUDL_PRIV_NONE, true, &found);
	if (found)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("gpudl program \"%s\" already exists", name),
				 errhint("Add rules with gpudl_add_rules(), or drop it first with gpudl_drop_program().")));
	if (rules != NULL)
		prog = validate_new_rules(name, rules, false);

	SPI_connect();
	values[0] = CStringGetTextDatum(name);
	spi_arg(fcinfo, 2, &values[1], &nulls[1]);
	if (SPI_execute_with_args("INSERT INTO gpudl.programs(name, description) VALUES ($1, $2)",
							  2, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "gpudl: could not insert program");
	SPI_finish();

	if (prog != NULL && prog->nitems > 0)
		(void) insert_validated_rules(name, prog, false);
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

/* gpudl_add_rules(program, rules): validate, insert, return the new ids. */
Datum
gpudl_add_rules(PG_FUNCTION_ARGS)
{
	char	   *program = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *rules = text_to_cstring(PG_GETARG_TEXT_PP(1));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *ids = insert_rules_text(program, rules, false, true);
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	foreach(lc, ids)
	{
		Datum		v = Int64GetDatum((int64) (intptr_t) lfirst(lc));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &v, &isnull);
	}
	return (Datum) 0;
}

/* gpudl_drop_program(name): delete the program; rules and bindings cascade. */
Datum
gpudl_drop_program(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];

	gpudl_require_program(name, GPUDL_PRIV_OWN);
	gpudl_plan_forget(name);
	SPI_connect();
	values[0] = CStringGetTextDatum(name);
	if (SPI_execute_with_args("DELETE FROM gpudl.programs WHERE name = $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "gpudl: could not delete program");
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * Validate the program as it would be with the new binding, before writing
 * it, so errors name the binding rather than a catalog statement; the
 * caller must be able to read the bound table.
 */
static void
validate_binding(const char *program, const char *predicate, Oid relid, ArrayType *columns)
{
	GpudlProgramDef *def = gpudl_load_program(program);
	GpudlBinding *b = NULL;
	ListCell   *lc;

	foreach(lc, def->bindings)
	{
		GpudlBinding *old = lfirst(lc);

		if (strcmp(old->predicate, predicate) == 0)
			b = old;
	}
	if (b == NULL)
	{
		b = palloc0(sizeof(GpudlBinding));
		b->predicate = pstrdup(predicate);
		def->bindings = lappend(def->bindings, b);
	}
	b->relid = relid;
	b->columns = NIL;
	if (columns != NULL)
	{
		Datum	   *elems;
		bool	   *nulls;
		int			n,
					k;

		deconstruct_array(columns, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
						  &elems, &nulls, &n);
		for (k = 0; k < n; k++)
			b->columns = lappend(b->columns, pstrdup(NameStr(*DatumGetName(elems[k]))));
	}
	/* a binding must not read what its author may not (42501) */
	gpudl_require_readable(relid, b->columns, program, predicate);
	/* its columns exist and it is a table or view, also when no rule reads it yet (42703, 42809) */
	{
		GdlRelInfo	info;

		memset(&info, 0, sizeof(info));
		(void) gpudl_resolve_predicate(def, predicate, &info);
	}
	(void) gpudl_analyze_program(def);
}

/*
 * gpudl_bind(program, predicate, relation, columns): map an extensional
 * predicate to a table (or some of its columns, in order).  The catalog
 * trigger validates the program with the new binding.
 */
Datum
gpudl_bind(PG_FUNCTION_ARGS)
{
	char	   *program = gpudl_text_arg(fcinfo, 0, "program name");
	char	   *predicate = gpudl_text_arg(fcinfo, 1, "predicate");
	Oid			relid;
	Oid			argtypes[4] = {TEXTOID, TEXTOID, REGCLASSOID, NAMEARRAYOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(2);
	gpudl_require_program(program, GPUDL_PRIV_MODIFY);
	/* a regclass given as a number need not name a relation (42P01, not at query time) */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid),
				 errhint("Bind predicate \"%s\" to a table by name: gpudl_bind(%s, %s, 'schema.table').",
						 predicate, quote_literal_cstr(program), quote_literal_cstr(predicate))));
	/* any other text is a name rules can write: quoted when it needs it */
	if (predicate[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("predicate name must not be empty"),
				 errhint("Any other text is a predicate name; rules write names other than "
						 "lower-case identifiers in quotes, as in \"Has Car\"(X, Y).")));
	if (!PG_ARGISNULL(3))
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(3);

		if (ARR_NDIM(arr) > 1 || array_contains_nulls(arr))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("columns must be a one-dimensional array of column names without nulls")));
	}

	validate_binding(program, predicate, relid, PG_ARGISNULL(3) ? NULL : PG_GETARG_ARRAYTYPE_P(3));

	gpudl_catalog_write_depth++;
	PG_TRY();
	{
	SPI_connect();
	values[0] = CStringGetTextDatum(program);
	values[1] = CStringGetTextDatum(predicate);
	values[2] = ObjectIdGetDatum(relid);
	spi_arg(fcinfo, 3, &values[3], &nulls[3]);
	if (SPI_execute_with_args("INSERT INTO gpudl.bindings(program, predicate, relation, columns) "
							  "VALUES ($1, $2, $3, $4) ON CONFLICT (program, predicate) "
							  "DO UPDATE SET relation = EXCLUDED.relation, columns = EXCLUDED.columns",
							  4, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "gpudl: could not write binding");
	SPI_finish();
	}
	PG_FINALLY();
	{
		gpudl_catalog_write_depth--;
	}
	PG_END_TRY();
	PG_RETURN_VOID();
}

/* gpudl_explain(program): strata and rules, then the compiled plan. */
Datum
gpudl_explain(PG_FUNCTION_ARGS)
{
	char	   *program = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpudlProgramDef *def;
	GdlAnalysis *a;
	char	  **lines;
	int			n,
				i;

	def = gpudl_load_program(program);
	a = gpudl_analyze_program(def);
	n = gdl_explain_strata(a, &lines);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < n; i++)
	{
		Datum		v = CStringGetTextDatum(lines[i]);
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &v, &isnull);
	}
	/* then the compiled plan: join orders and semi-naive versions */
	n = gdl_plan_explain(gdl_plan_compile(a), &lines);
	for (i = 0; i < n; i++)
	{
		Datum		v = CStringGetTextDatum(lines[i]);
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &v, &isnull);
	}
	return (Datum) 0;
}
