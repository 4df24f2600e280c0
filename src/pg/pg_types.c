/*
 * pg_types.c — which PostgreSQL column types gpudl reads, and as what.
 *
 * Every engine value is 64 bits of one of five engine types (int, bigint,
 * text as dictionary ids, bool, float8).  A column type is read when it maps
 * onto one of them without changing SQL's equality and order:
 *
 *   int2, int4 -> int; int8 -> bigint; bool; float4, float8 -> float8;
 *   text, varchar, bpchar, name -> text (as today);
 *   date -> int (days since 2000-01-01, PostgreSQL's own representation);
 *   timestamp, timestamptz, time -> bigint (microseconds: PostgreSQL's own);
 *   money -> bigint (cents); oid and the reg* aliases -> bigint;
 *   uuid, inet, cidr, macaddr, macaddr8, bytea, "char", bit, varbit, timetz,
 *   pg_lsn, enums -> text: the type's text output, whose equality is the
 *   type's; numeric -> text of trim_scale(value), equal iff equal numbers;
 *   a domain over any of these -> its base type's.
 *
 * Everything else (interval, json, jsonb, xml, geometric types, arrays,
 * ranges, composites, tsvector, ...) has no such mapping: its columns are
 * refused with 42804 when a rule, goal or learner would use their values,
 * and read as a placeholder (never as values) where a rule writes _.
 * The engine value keeps the engine type's semantics on both backends
 * (CPU and GPU compare the same 64-bit values); a column definition list or
 * a target table may declare the original type, and the value goes back
 * into it.
 */
#include "pg/gpudl_run.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

/* How a column type is read (after domains are resolved to their base). */
GpudlValueKind
gpudl_value_kind(Oid typid)
{
	Oid			base;

	switch (typid)
	{
		case INT2OID:
			return GPUDL_VK_INT2;
		case INT4OID:
			return GPUDL_VK_INT4;
		case INT8OID:
			return GPUDL_VK_INT8;
		case BOOLOID:
			return GPUDL_VK_BOOL;
		case FLOAT4OID:
			return GPUDL_VK_FLOAT4;
		case FLOAT8OID:
			return GPUDL_VK_FLOAT8;
		case NAMEOID:
			return GPUDL_VK_NAME;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			return GPUDL_VK_STRING;
		case DATEOID:
			return GPUDL_VK_DATE;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return GPUDL_VK_TIMESTAMP;
		case TIMEOID:
			return GPUDL_VK_TIME;
		case MONEYOID:
			return GPUDL_VK_INT64;
		case OIDOID:
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGNAMESPACEOID:
		case REGROLEOID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGCOLLATIONOID:
			return GPUDL_VK_OID;
		case NUMERICOID:
			return GPUDL_VK_NUMERIC;
		case UUIDOID:
		case INETOID:
		case CIDROID:
		case MACADDROID:
		case MACADDR8OID:
		case BYTEAOID:
		case CHAROID:
		case BITOID:
		case VARBITOID:
		case TIMETZOID:
		case PG_LSNOID:
			return GPUDL_VK_TEXTOUT;
		default:
			break;
	}
	if (!OidIsValid(typid))
		return GPUDL_VK_NONE;
	switch (get_typtype(typid))
	{
		case TYPTYPE_ENUM:
			return GPUDL_VK_TEXTOUT;
		case TYPTYPE_DOMAIN:
			base = getBaseType(typid);
			return base != typid ? gpudl_value_kind(base) : GPUDL_VK_NONE;
		default:
			return GPUDL_VK_NONE;
	}
}

/* Map a PostgreSQL column type to an engine type (UNKNOWN if unsupported). */
GdlType
gpudl_type_from_oid(Oid typid)
{
	switch (gpudl_value_kind(typid))
	{
		case GPUDL_VK_INT2:
		case GPUDL_VK_INT4:
		case GPUDL_VK_DATE:
			return GDL_TYPE_INT;
		case GPUDL_VK_INT8:
		case GPUDL_VK_INT64:
		case GPUDL_VK_TIMESTAMP:
		case GPUDL_VK_TIME:
		case GPUDL_VK_OID:
			return GDL_TYPE_BIGINT;
		case GPUDL_VK_BOOL:
			return GDL_TYPE_BOOL;
		case GPUDL_VK_FLOAT4:
		case GPUDL_VK_FLOAT8:
			return GDL_TYPE_FLOAT8;
		case GPUDL_VK_NAME:
		case GPUDL_VK_STRING:
		case GPUDL_VK_TEXTOUT:
		case GPUDL_VK_NUMERIC:
			return GDL_TYPE_TEXT;
		case GPUDL_VK_NONE:
			break;
	}
	return GDL_TYPE_UNKNOWN;
}

/*
 * Whether a type is read through a mapping (date, timestamp, uuid, ...)
 * rather than as the engine type it is: the learner then types its columns
 * by the SQL type, so a date never joins an integer.
 */
bool
gpudl_type_is_mapped(Oid typid)
{
	switch (gpudl_value_kind(typid))
	{
		case GPUDL_VK_DATE:
		case GPUDL_VK_INT64:
		case GPUDL_VK_TIMESTAMP:
		case GPUDL_VK_TIME:
		case GPUDL_VK_OID:
		case GPUDL_VK_TEXTOUT:
		case GPUDL_VK_NUMERIC:
			return true;
		default:
			return false;
	}
}

/* Prepare the reading of values of type typid (output function looked up once). */
void
gpudl_reader_init(GpudlReader *r, Oid typid)
{
	memset(r, 0, sizeof(*r));
	r->typid = typid;
	r->kind = gpudl_value_kind(typid);
	if (r->kind == GPUDL_VK_TEXTOUT || r->kind == GPUDL_VK_NUMERIC)
	{
		Oid			func;
		bool		isvarlena;

		getTypeOutputInfo(r->kind == GPUDL_VK_NUMERIC ? NUMERICOID : typid, &func, &isvarlena);
		fmgr_info(func, &r->out);
	}
}

/* Engine value of a non-null Datum read by r. */
int64_t
gpudl_reader_value(const GpudlReader *r, Datum d, GdlDict *dict)
{
	switch (r->kind)
	{
		case GPUDL_VK_INT2:
			return DatumGetInt16(d);
		case GPUDL_VK_INT4:
			return DatumGetInt32(d);
		case GPUDL_VK_DATE:
			return DatumGetDateADT(d);
		case GPUDL_VK_INT8:
		case GPUDL_VK_INT64:
		case GPUDL_VK_TIMESTAMP:
		case GPUDL_VK_TIME:
			return DatumGetInt64(d);
		case GPUDL_VK_OID:
			return (int64_t) DatumGetObjectId(d);
		case GPUDL_VK_BOOL:
			return DatumGetBool(d) ? 1 : 0;
		case GPUDL_VK_FLOAT4:
		case GPUDL_VK_FLOAT8:
			{
				double		f = r->kind == GPUDL_VK_FLOAT4 ? DatumGetFloat4(d) : DatumGetFloat8(d);
				int64_t		v;

				memcpy(&v, &f, sizeof(v));
				return v;
			}
		case GPUDL_VK_NAME:
			{
				const char *s = NameStr(*DatumGetName(d));

				return gdl_dict_intern(dict, s, strlen(s));
			}
		case GPUDL_VK_STRING:
			{
				text	   *t = DatumGetTextPP(d);
				int64_t		id = gdl_dict_intern(dict, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));

				if ((Pointer) t != DatumGetPointer(d))
					pfree(t);
				return id;
			}
		case GPUDL_VK_NUMERIC:
		case GPUDL_VK_TEXTOUT:
			{
				char	   *s;
				int64_t		id;
				Datum		trimmed = (Datum) 0;

				/* numeric: 1.50 = 1.5, so one text for both */
				if (r->kind == GPUDL_VK_NUMERIC)
				{
					trimmed = DirectFunctionCall1(numeric_trim_scale, d);
					if (DatumGetPointer(trimmed) == DatumGetPointer(d))
						trimmed = (Datum) 0;	/* never free the caller's value */
					else
						d = trimmed;
				}
				s = OutputFunctionCall((FmgrInfo *) &r->out, d);
				id = gdl_dict_intern(dict, s, strlen(s));
				pfree(s);
				if (trimmed != (Datum) 0)
					pfree(DatumGetPointer(trimmed));
				return id;
			}
		case GPUDL_VK_NONE:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("gpudl cannot read values of type %s", format_type_be(r->typid)),
			 errhint("Cast the column to int, bigint, text, bool or float8 in a view.")));
	return 0;
}

/* Engine value of a non-null Datum of PostgreSQL type typid. */
int64_t
gpudl_datum_to_value(Datum d, Oid typid, GdlDict *dict)
{
	GpudlReader r;

	gpudl_reader_init(&r, typid);
	return gpudl_reader_value(&r, d, dict);
}

/* The PostgreSQL type an engine type is returned as by default. */
Oid
gpudl_type_oid(GdlType t)
{
	switch (t)
	{
		case GDL_TYPE_INT:
			return INT4OID;
		case GDL_TYPE_BIGINT:
			return INT8OID;
		case GDL_TYPE_TEXT:
			return TEXTOID;
		case GDL_TYPE_BOOL:
			return BOOLOID;
		case GDL_TYPE_FLOAT8:
			return FLOAT8OID;
		case GDL_TYPE_UNKNOWN:
			break;
	}
	return InvalidOid;
}

/* Refuse an integer that is not a value of the mapped type typid (22008). */
static void
out_of_range(int64_t v, Oid typid)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("value %lld is out of range for type %s", (long long) v, format_type_be(typid)),
			 errhint("Date, time and timestamp columns hold the values of date, time and timestamp columns.")));
}

/* A Datum of type typid (already checked compatible) for an engine value. */
Datum
gpudl_value_to_datum(int64_t v, GdlType t, Oid typid, GdlDict *dict)
{
	GpudlValueKind kind = gpudl_value_kind(typid);

	switch (t)
	{
		case GDL_TYPE_TEXT:
			{
				size_t		len;
				const char *s = gdl_dict_string(dict, (int32_t) v, &len);

				if (typid == NAMEOID)
				{
					Name		nm = palloc0(NAMEDATALEN);

					memcpy(NameStr(*nm), s, Min(len, NAMEDATALEN - 1));
					return NameGetDatum(nm);
				}
				if (typid == TEXTOID || typid == VARCHAROID || typid == InvalidOid)
					return PointerGetDatum(cstring_to_text_with_len(s, (int) len));
				/* uuid, numeric, an enum, a domain, bpchar ...: its input function */
				{
					Oid			func,
								ioparam;

					getTypeInputInfo(typid, &func, &ioparam);
					return OidInputFunctionCall(func, pnstrdup(s, len), ioparam, -1);
				}
			}
		case GDL_TYPE_BOOL:
			return BoolGetDatum(v != 0);
		case GDL_TYPE_FLOAT8:
			{
				double		f;

				memcpy(&f, &v, sizeof(f));
				if (typid == FLOAT4OID)
					return Float4GetDatum((float4) f);
				return Float8GetDatum(f);
			}
		default:
			if (typid == INT8OID)
				return Int64GetDatum(v);
			if (typid == INT4OID)
				return Int32GetDatum((int32) v);
			if (typid == INT2OID)
			{
				if (v < PG_INT16_MIN || v > PG_INT16_MAX)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("value %lld is out of range for type smallint", (long long) v)));
				return Int16GetDatum((int16) v);
			}
			if (typid == FLOAT8OID)
				return Float8GetDatum((double) v);
			if (typid == NUMERICOID)
				return DirectFunctionCall1(int8_numeric, Int64GetDatum(v));
			switch (kind)
			{
				case GPUDL_VK_DATE:
					if (v < PG_INT32_MIN || v > PG_INT32_MAX ||
						(!IS_VALID_DATE(v) && v != DATEVAL_NOBEGIN && v != DATEVAL_NOEND))
						out_of_range(v, typid);
					return DateADTGetDatum((DateADT) v);
				case GPUDL_VK_OID:
					if (v < 0 || v > (int64_t) PG_UINT32_MAX)
						out_of_range(v, typid);
					return ObjectIdGetDatum((Oid) v);
				case GPUDL_VK_TIMESTAMP:
					if (!IS_VALID_TIMESTAMP(v) && v != DT_NOBEGIN && v != DT_NOEND)
						out_of_range(v, typid);
					return Int64GetDatum(v);
				case GPUDL_VK_TIME:
					if (v < 0 || v > USECS_PER_DAY)
						out_of_range(v, typid);
					return Int64GetDatum(v);
				default:
					return Int64GetDatum(v);
			}
	}
}

/* Can an engine column of type t be returned as PostgreSQL type typid? */
bool
gpudl_type_compatible(GdlType t, Oid typid)
{
	GpudlValueKind kind = gpudl_value_kind(typid);

	switch (t)
	{
		case GDL_TYPE_INT:
			return typid == INT4OID || typid == INT8OID || typid == NUMERICOID || typid == INT2OID ||
				kind == GPUDL_VK_DATE || kind == GPUDL_VK_INT64 || kind == GPUDL_VK_TIMESTAMP ||
				kind == GPUDL_VK_TIME || kind == GPUDL_VK_OID;
		case GDL_TYPE_BIGINT:
			return typid == INT8OID || typid == NUMERICOID || kind == GPUDL_VK_INT64 ||
				kind == GPUDL_VK_TIMESTAMP || kind == GPUDL_VK_TIME || kind == GPUDL_VK_OID;
		case GDL_TYPE_TEXT:
			return kind == GPUDL_VK_STRING || kind == GPUDL_VK_NAME ||
				kind == GPUDL_VK_TEXTOUT || kind == GPUDL_VK_NUMERIC;
		case GDL_TYPE_BOOL:
			return kind == GPUDL_VK_BOOL;
		case GDL_TYPE_FLOAT8:
			return typid == FLOAT8OID || typid == FLOAT4OID;
		case GDL_TYPE_UNKNOWN:
			break;
	}
	return false;
}

/*
 * The first column of an extensional predicate whose type gpudl does not
 * read, or -1 (derived predicates have engine types only).
 */
int
gpudl_unreadable_column(const GdlPred *p)
{
	int			c;

	if (!p->is_edb || p->rel.types == NULL)
		return -1;
	for (c = 0; c < p->arity && c < p->rel.ncols; c++)
		if (p->rel.types[c] == GDL_TYPE_UNKNOWN)
			return c;
	return -1;
}

/*
 * Say that column c of predicate p has a type gpudl does not read: an
 * ERROR (42804) when its values are needed, a NOTICE when the predicate is
 * only left out (learning and mining read every predicate of a program).
 */
void
gpudl_report_unreadable(int elevel, const GdlPred *p, int c, const char *what)
{
	ereport(elevel,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" of table %s has unsupported type %s%s",
					p->rel.colnames && p->rel.colnames[c] ? p->rel.colnames[c] : "?",
					p->rel.display_name ? p->rel.display_name : p->name,
					p->rel.typnames && p->rel.typnames[c] ? p->rel.typnames[c] : "unknown",
					elevel >= ERROR ? "" : psprintf(": %s leaves out predicate \"%s\"", what, p->name)),
			 elevel >= ERROR ?
			 errdetail("Predicate \"%s\" reads it as argument %d (%s).", p->name, c + 1, what) : 0,
			 errhint("Write _ for this argument, or bind the predicate to a view that casts the "
					 "column to a type gpudl reads (int, bigint, text, bool, float8, date, "
					 "timestamp, numeric, uuid, ...).")));
}
