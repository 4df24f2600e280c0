/*
 * test_rows.h — host rows for the backend tests (test_cpu_backend.c,
 * test_cuda_backend.c): n rows of arity values, row-major, made at random
 * and compared lexicographically (implemented in test_util.c).
 */
#ifndef TEST_ROWS_H
#define TEST_ROWS_H

#include <stdint.h>

/* n rows of arity values, row-major. */
typedef struct Rows
{
	int			arity;
	int64_t		n;
	int64_t    *v;
} Rows;

/* A random value of a class (the test's own classes) below about range. */
typedef int64_t (*RowsValueFn) (int cls, int64_t range);

/* n random rows of arity values, each from val(cls, range); malloc'd. */
extern Rows rows_random_of(int arity, int64_t n, RowsValueFn val, int cls, int64_t range);

/* The arity rows_cmp compares (qsort passes no argument). */
extern int	rows_cmp_arity;
/* Lexicographic order of two rows of rows_cmp_arity values, for qsort. */
extern int	rows_cmp(const void *a, const void *b);

#endif							/* TEST_ROWS_H */
