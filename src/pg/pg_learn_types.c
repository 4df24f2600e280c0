/*
 * pg_learn_types.c — argument types for rule learning beyond SQL types
 * (issue 15): which arguments of the background and the target may share a
 * variable.  Columns of different SQL types never do (the ILP core sees to
 * that); here each argument may get a tag, and two tagged arguments join
 * only when their tags are equal:
 *
 *   - a column with a single-column foreign key: "table.column" of the
 *     referenced column, and that referenced column gets the same tag;
 *   - a column whose type is a domain: the domain's name;
 *   - the user's 'types' argument, Popper's type/2 in spirit:
 *     "f(train); has_car(train, car); has_load(car, load)" — one entry per
 *     predicate (background or target), one type name per argument; it
 *     overrides the schema's tags.
 */
#include "pg/gpudl_learn.h"

#include <ctype.h>

#include "access/htup_details.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* "schema.table.column" of a column, as a tag. */
static char *
column_tag(Oid relid, AttrNumber att)
{
	return psprintf("%s.%s", get_rel_name(relid), get_attname(relid, att, false));
}

/*
 * Tags of a table's columns from the schema (see the file comment); tags[i]
 * stays NULL where the schema says nothing.  One catalog query per table
 * (its single-column foreign keys, either way), read with the caller's
 * rights (pg_constraint is readable by everyone).
 */
void
gpudl_schema_tags(const GdlRelInfo *rel, int ncols, const char **tags)
{
	MemoryContext caller = CurrentMemoryContext;
	AttrNumber	atts[GDL_ILP_MAX_ARITY];
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];

	if (rel->colnames == NULL)
		return;
	for (int c = 0; c < ncols && c < GDL_ILP_MAX_ARITY; c++)
	{
		Oid			typid;

		atts[c] = get_attnum(rel->relid, rel->colnames[c]);
		if (atts[c] == InvalidAttrNumber)
			continue;
		typid = get_atttype(rel->relid, atts[c]);
		if (get_typtype(typid) == TYPTYPE_DOMAIN || gpudl_type_is_mapped(typid))
			tags[c] = pstrdup(format_type_be(typid));
	}
	args[0] = ObjectIdGetDatum(rel->relid);
	SPI_connect();
	if (SPI_execute_with_args("SELECT conrelid, conkey[1], confrelid, confkey[1] FROM pg_catalog.pg_constraint "
							  "WHERE contype = 'f' AND cardinality(conkey) = 1 "
							  "AND (conrelid = $1 OR confrelid = $1) ORDER BY oid",
							  1, argtypes, args, NULL, true, 0) == SPI_OK_SELECT)
	{
		uint64		n = SPI_processed;
		/* in the caller's context: SPI_finish frees SPI's */
		Oid		   *fr = MemoryContextAlloc(caller, sizeof(Oid) * (n + 1));
		AttrNumber *fa = MemoryContextAlloc(caller, sizeof(AttrNumber) * (n + 1));
		Oid		   *cr = MemoryContextAlloc(caller, sizeof(Oid) * (n + 1));
		AttrNumber *ca = MemoryContextAlloc(caller, sizeof(AttrNumber) * (n + 1));

		for (uint64 i = 0; i < n; i++)
		{
			bool		isnull;
			HeapTuple	t = SPI_tuptable->vals[i];
			TupleDesc	d = SPI_tuptable->tupdesc;

			cr[i] = DatumGetObjectId(SPI_getbinval(t, d, 1, &isnull));
			ca[i] = DatumGetInt16(SPI_getbinval(t, d, 2, &isnull));
			fr[i] = DatumGetObjectId(SPI_getbinval(t, d, 3, &isnull));
			fa[i] = DatumGetInt16(SPI_getbinval(t, d, 4, &isnull));
		}
		SPI_finish();
		MemoryContextSwitchTo(caller);
		for (int c = 0; c < ncols && c < GDL_ILP_MAX_ARITY; c++)
		{
			bool		done = false;

			if (atts[c] == InvalidAttrNumber)
				continue;
			/* this column references another: the referenced column's tag */
			for (uint64 i = 0; i < n && !done; i++)
				if (cr[i] == rel->relid && ca[i] == atts[c])
				{
					tags[c] = column_tag(fr[i], fa[i]);
					done = true;
				}
			/* other columns reference this one: its own */
			for (uint64 i = 0; i < n && !done; i++)
				if (fr[i] == rel->relid && fa[i] == atts[c])
				{
					tags[c] = column_tag(rel->relid, atts[c]);
					done = true;
				}
		}
		return;
	}
	SPI_finish();
}

/* Skip blanks. */
static const char *
skip_ws(const char *p)
{
	while (*p && isspace((unsigned char) *p))
		p++;
	return p;
}

/* Read an identifier (letters, digits, _) into a palloc'ed string, or NULL. */
static char *
read_ident(const char **pp)
{
	const char *p = skip_ws(*pp);
	const char *s = p;

	while (*p && (isalnum((unsigned char) *p) || *p == '_'))
		p++;
	if (p == s)
		return NULL;
	*pp = p;
	return pnstrdup(s, p - s);
}

/*
 * Read a predicate name of a 'types' entry: an identifier, or a quoted name
 * as the Datalog lexer reads it ('co-occurs_with', "/film/film/genre", with
 * the escapes \" \' \\ \n \t \r); NULL when there is none or it is not
 * closed.
 */
static char *
read_pred_name(const char **pp)
{
	const char *p = skip_ws(*pp);
	char		q = *p;
	StringInfoData b;

	if (q != '"' && q != '\'')
		return read_ident(pp);
	initStringInfo(&b);
	for (p++; *p != q; p++)
	{
		char		c = *p;

		if (c == '\0' || c == '\n')
			return NULL;
		if (c == '\\')
		{
			c = *++p;
			if (c == '\0')
				return NULL;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
		}
		appendStringInfoChar(&b, c);
	}
	*pp = p + 1;
	return b.len > 0 ? b.data : NULL;
}

/* Raise 22023 for a malformed 'types' text. */
static void
bad_types(const char *types, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid types: %s", why),
			 errdetail("Got: %s", types),
			 errhint("Write one entry per predicate, e.g. 'f(train); has_car(train, car)'.")));
}

/* Apply the user's 'types' text to the background and the target. */
void
gpudl_learn_apply_types(GpudlLearnSetup *ls, const char *types)
{
	const char *p = types;

	for (;;)
	{
		char	   *name;
		char	   *argt[GDL_ILP_MAX_ARITY];
		int			n = 0;
		bool		found = false;

		p = skip_ws(p);
		while (*p == ';' || *p == '.' || *p == ',')
			p = skip_ws(p + 1);
		if (*p == '\0')
			break;
		name = read_pred_name(&p);
		if (name == NULL)
			bad_types(types, "a predicate name expected (quote other names, as in '\"/film/film/genre\"(film, genre)')");
		p = skip_ws(p);
		if (*p != '(')
			bad_types(types, psprintf("\"(\" expected after \"%s\"", name));
		p++;
		for (;;)
		{
			char	   *t = read_ident(&p);

			if (t == NULL)
				bad_types(types, psprintf("a type name expected in the entry of \"%s\"", name));
			if (n == GDL_ILP_MAX_ARITY)
				bad_types(types, psprintf("\"%s\" has too many arguments", name));
			argt[n++] = t;
			p = skip_ws(p);
			if (*p == ',')
			{
				p++;
				if (*skip_ws(p) == ')')
				{
					p = skip_ws(p) + 1;
					break;
				}
				continue;
			}
			if (*p == ')')
			{
				p++;
				break;
			}
			bad_types(types, psprintf("\",\" or \")\" expected in the entry of \"%s\"", name));
		}
		if (strcmp(name, ls->target) == 0)
		{
			if (n != ls->arity)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("types gives %d argument%s for \"%s\", which has %d", n,
								n == 1 ? "" : "s", name, ls->arity)));
			for (int c = 0; c < n; c++)
				ls->tags[c] = ls->prob.tags[c] = argt[c];
			found = true;
		}
		for (int r = 0; r < ls->nrels; r++)
			if (strcmp(ls->rels[r].name, name) == 0)
			{
				if (n != ls->rels[r].arity)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("types gives %d argument%s for \"%s\", which has %d", n,
									n == 1 ? "" : "s", name, ls->rels[r].arity)));
				for (int c = 0; c < n; c++)
					ls->rels[r].tags[c] = argt[c];
				found = true;
			}
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("types names \"%s\", which is neither the target nor a background "
							"predicate", name),
					 errhint("Name the target and the program's predicates or bound tables.")));
	}
}

/*
 * Tags of the target's arguments from the positives' columns: a column of a
 * domain type tags its argument with the domain's name (the query is run
 * with LIMIT 0 for its row type only).
 */
void
gpudl_example_tags(const char *source, int ncols, const char **tags)
{
	char	   *sql;
	MemoryContext caller = CurrentMemoryContext;

	sql = gpudl_looks_like_relation_name(source) ? psprintf("SELECT * FROM %s LIMIT 0", source)
		: psprintf("SELECT * FROM (%s) q LIMIT 0", source);
	SPI_connect();
	if (SPI_execute(sql, true, 0) == SPI_OK_SELECT && SPI_tuptable->tupdesc->natts == ncols)
		for (int c = 0; c < ncols; c++)
		{
			Oid			typid = TupleDescAttr(SPI_tuptable->tupdesc, c)->atttypid;

			if (get_typtype(typid) == TYPTYPE_DOMAIN || gpudl_type_is_mapped(typid))
			{
				MemoryContext spi = MemoryContextSwitchTo(caller);

				tags[c] = pstrdup(format_type_be(typid));
				MemoryContextSwitchTo(spi);
			}
		}
	SPI_finish();
}
