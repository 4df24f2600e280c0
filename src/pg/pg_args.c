/*
 * pg_args.c — arguments of gpudl's SQL functions: a NULL where a value is
 * required is an error naming the argument (22004), the same everywhere.
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
