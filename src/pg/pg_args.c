/*
 * pg_args.c — arguments of gpudl's SQL functions: a NULL where a value is
 * required is an error naming the argument (22004), the same everywhere;
 * and a word argument ('max', 'pca', ...) looked up in the caller's table.
 */
#include "pg/gpudl_pg.h"

#include "utils/builtins.h"

/* A required text argument as a C string. */
char *
gpudl_text_arg(FunctionCallInfo fcinfo, int n, const char *what)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return text_to_cstring(PG_GETARG_TEXT_PP(n));
}

/* A required integer argument. */
int32
gpudl_int_arg(FunctionCallInfo fcinfo, int n, const char *what)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	return PG_GETARG_INT32(n);
}

/*
 * The value of the keyword s in keys (ended by a NULL name).  Any other
 * word is an error (22023): what_fmt names it (one %s, the word given),
 * and the hint lists the words taken.
 */
int
gpudl_keyword(const char *s, const GpudlKeyword *keys, const char *what_fmt, const char *hint)
{
	for (; keys->name != NULL; keys++)
		if (strcmp(s, keys->name) == 0)
			return keys->value;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", psprintf(what_fmt, s)),
			 errhint("%s", hint)));
	return 0;					/* not reached */
}
