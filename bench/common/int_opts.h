/*
 * int_opts.h — the integer options of a benchmark's command line as a
 * table (bench/ilp/family.c, bench/ilp/kg_gpu.c): each option letter with
 * the int its argument sets, so that the getopt loop's switch keeps only
 * the options that do something else.
 *
 *   while ((opt = bench_getopt(argc, argv, "e:t:cv", int_opts)) != -1)
 *       switch (opt) ... the other options
 */
#ifndef INT_OPTS_H
#define INT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

/* One option of the table; the table ends with a NULL value. */
typedef struct BenchIntOpt
{
	int			letter;			/* getopt's option character */
	int		   *value;			/* set to atoi() of its argument */
} BenchIntOpt;

/*
 * Set the int of option c to atoi(arg) when c is in opts; false when it is
 * not (the caller's switch handles it).
 */
static inline bool
bench_int_opt(const BenchIntOpt *opts, int c, const char *arg)
{
	for (; opts->value != NULL; opts++)
	{
		if (opts->letter == c)
		{
			*opts->value = atoi(arg);
			return true;
		}
	}
	return false;
}

/*
 * getopt(), setting the ints of the options in opts as they come: the next
 * option that is not in opts, or -1 at the end.
 */
static inline int
bench_getopt(int argc, char **argv, const char *optstring, const BenchIntOpt *opts)
{
	int			c;

	while ((c = getopt(argc, argv, optstring)) != -1 && bench_int_opt(opts, c, optarg))
		;
	return c;
}

#endif							/* INT_OPTS_H */
