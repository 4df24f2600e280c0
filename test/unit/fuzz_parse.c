/*
 * fuzz_parse.c — fuzz harness for the language layer: parse arbitrary text,
 * check that printing is stable (print, reparse, print again gives the same
 * text, and each item's own text parses to the same clause), then analyse it
 * with a fake resolver and explain it.  Errors are fine; crashes, sanitizer
 * reports and unstable printing are bugs.
 *
 *   make -C test/unit fuzz && test/unit/bin/fuzz_parse test/unit/corpus
 *
 * Built with -DGDL_FUZZ_STANDALONE (any compiler, no libFuzzer) it has its
 * own main(): it runs every file (or directory of files) named on the
 * command line, then, when GDL_FUZZ_SECONDS is set, mutates those inputs at
 * random for that many seconds (seed from GDL_FUZZ_SEED).
 */
#include "test_util.h"
#include "../../src/lang/gdl_lang.h"

#include <string.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct FuzzTable
{
	const char *name;
	int			ncols;
	GdlType		types[3];
} FuzzTable;

static const FuzzTable fuzz_tables[] = {
	{"edge", 2, {GDL_TYPE_INT, GDL_TYPE_INT}},
	{"node", 1, {GDL_TYPE_INT}},
	{"person", 1, {GDL_TYPE_TEXT}},
	{"big", 2, {GDL_TYPE_BIGINT, GDL_TYPE_BIGINT}},
	{"fl", 2, {GDL_TYPE_TEXT, GDL_TYPE_FLOAT8}},
	{"flags", 2, {GDL_TYPE_TEXT, GDL_TYPE_BOOL}},
	{"geo", 2, {GDL_TYPE_INT, GDL_TYPE_UNKNOWN}},
	{"s.t", 3, {GDL_TYPE_INT, GDL_TYPE_TEXT, GDL_TYPE_BIGINT}},
};
static char *fuzz_colnames[] = {"a", "b", "c"};
static char *fuzz_typnames[] = {"int4", "point", "text"};

/* Fake resolver: a few fixed tables. */
static bool
fuzz_resolve(void *arg, const char *name, GdlRelInfo *out)
{
	size_t		i;

	for (i = 0; i < sizeof(fuzz_tables) / sizeof(fuzz_tables[0]); i++)
		if (strcmp(fuzz_tables[i].name, name) == 0)
		{
			out->relid = (uint32_t) i + 1;
			out->display_name = (char *) name;
			out->ncols = fuzz_tables[i].ncols;
			out->types = (GdlType *) fuzz_tables[i].types;
			out->colnames = fuzz_colnames;
			out->typnames = fuzz_typnames;
			return true;
		}
	return false;
}

/* Abort with a message: the fuzzer records the input as a crash. */
static void
fuzz_fail(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_parse: %s\n  first:  %s\n  second: %s\n", what, a, b ? b : "(none)");
	abort();
}

/* The canonical text of an item. */
static char *
item_string(const GdlItem *item)
{
	return item->kind == GDL_ITEM_CLAUSE ? gdl_clause_to_string(item->clause) :
		gdl_decl_to_string(item->decl);
}

/* Parse src; NULL on a gpudl error (its message in *msg). */
static GdlProgram *
try_parse(const char *src, const char **msg)
{
	GdlProgram *volatile prog = NULL;
	GdlError   *e = GDL_TRY(prog = gdl_parse(src));

	*msg = e ? e->message : NULL;
	return e ? NULL : prog;
}

/* Analyse prog; NULL on a gpudl error. */
static GdlAnalysis *
try_analyze(GdlProgram *prog)
{
	GdlAnalysis *volatile a = NULL;
	GdlError   *e = GDL_TRY(a = gdl_analyze(prog, fuzz_resolve, NULL));

	return e ? NULL : a;
}

/* Printing must be a fixpoint after one round, and item texts reparse alone. */
static void
check_roundtrip(const GdlProgram *prog)
{
	int			i;

	for (i = 0; i < prog->nitems; i++)
	{
		const GdlItem *item = &prog->items[i];
		char	   *s1 = item_string(item);
		const char *own = item->kind == GDL_ITEM_CLAUSE ? item->clause->text : item->decl->text;
		GdlProgram *p2;
		GdlProgram *p3;
		const char *msg;
		char	   *s2;

		p2 = try_parse(s1, &msg);
		if (p2 == NULL)
			fuzz_fail("printed item does not parse", s1, msg);
		if (p2->nitems != 1)
			fuzz_fail("printed item parses to a different number of items", s1, NULL);
		s2 = item_string(&p2->items[0]);
		if (strcmp(s1, s2) != 0)
			fuzz_fail("printing is not stable", s1, s2);

		p3 = try_parse(own, &msg);
		if (p3 == NULL)
			fuzz_fail("item text does not parse alone", own, msg);
		if (p3->nitems != 1 || strcmp(item_string(&p3->items[0]), s1) != 0)
			fuzz_fail("item text parses to something else alone", own, s1);
	}
}

/* One fuzz input: parse, round-trip, analyse, explain; then free everything. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool installed;
	char	   *src;
	GdlProgram *prog;
	GdlAnalysis *a;
	const char *msg;

	if (!installed)
	{
		gdl_test_host_install();
		installed = true;
	}
	if (size > 1 << 16)
		return 0;
	src = malloc(size + 1);
	if (src == NULL)
		return 0;
	memcpy(src, data, size);
	src[size] = '\0';

	prog = try_parse(src, &msg);
	if (prog != NULL)
	{
		check_roundtrip(prog);
		a = try_analyze(prog);
		if (a != NULL)
		{
			char	  **lines;
			int			n = gdl_explain_strata(a, &lines);
			int			i;

			for (i = 0; i < n; i++)
				if (lines[i] == NULL)
					fuzz_fail("explain gave a NULL line", "", NULL);
		}
	}
	gdl_test_reset();
	free(src);
	return 0;
}

#ifdef GDL_FUZZ_STANDALONE

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

typedef struct Input
{
	char	   *data;
	size_t		size;
} Input;

static Input *inputs;
static int	ninputs;
static int	capinputs;

/* Keep an input (a seed or an interesting mutation). */
static void
add_input(const char *data, size_t size)
{
	if (ninputs == capinputs)
	{
		capinputs = capinputs ? capinputs * 2 : 64;
		inputs = realloc(inputs, sizeof(Input) * capinputs);
	}
	inputs[ninputs].data = malloc(size + 1);
	memcpy(inputs[ninputs].data, data, size);
	inputs[ninputs].size = size;
	ninputs++;
}

/* Run one file as an input and keep it as a seed. */
static void
run_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf;
	long		n;

	if (f == NULL)
	{
		perror(path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t) n + 1);
	if (fread(buf, 1, (size_t) n, f) != (size_t) n)
		n = 0;
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *) buf, (size_t) n);
	add_input(buf, (size_t) n);
	free(buf);
}

/* Run a file, or every regular file of a directory. */
static void
run_path(const char *path)
{
	struct stat st;
	DIR		   *d;
	struct dirent *de;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
	{
		run_file(path);
		return;
	}
	d = opendir(path);
	while (d && (de = readdir(d)) != NULL)
	{
		char		full[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
			run_file(full);
	}
	if (d)
		closedir(d);
}

static uint64_t rng_state = 88172645463325252ull;

/* xorshift64 (test_util.c): a small deterministic generator. */
static uint64_t
rnd(void)
{
	return gdl_test_xorshift(&rng_state);
}

/* Tokens worth inserting: they reach deeper than random bytes do. */
static const char *const dict[] = {
	":-", ".", ",", "(", ")", "!", "not ", "=", "!=", "<", "<=", ">", ">=", "+", "-",
	"*", "/", "%", " % ", "_", "X", "Y", "Z", "N", "edge", "node", "person", "big",
	"fl", "flags", "geo", "s.t", "p", "q", "count(", "sum(", "min(", "max(", ".decl ",
	": int", ": text", ": bigint", ": float8", ": bool", "\"", "\\", "'", "/*", "*/",
	"//", "\n", "1", "-1", "2147483648", "9223372036854775807", "1.5", "1e308",
	"true", "false", "p(X) :- edge(X, Y).", "q(X) :- p(X), !node(X).", "x",
};

/*
 * A random range of a non-empty buffer of size bytes: its start (returned)
 * and its length in *n, 1 to maxlen bytes but not past the end.
 */
static size_t
random_range(size_t size, size_t maxlen, size_t *n)
{
	size_t		p = rnd() % size;

	*n = 1 + rnd() % maxlen;
	if (p + *n > size)
		*n = size - p;
	return p;
}

/* Apply 1..4 random edits to buf (capacity cap), returning the new size. */
static size_t
mutate(char *buf, size_t size, size_t cap)
{
	int			edits = 1 + (int) (rnd() % 4);

	while (edits-- > 0)
	{
		size_t		pos = size ? rnd() % (size + 1) : 0;

		switch (rnd() % 6)
		{
			case 0:				/* flip a byte */
				if (size)
					buf[rnd() % size] = (char) (rnd() % 256);
				break;
			case 1:				/* delete a range */
				if (size)
				{
					size_t		n,
								p = random_range(size, 8, &n);

					memmove(buf + p, buf + p + n, size - p - n);
					size -= n;
				}
				break;
			case 2:				/* insert a dictionary token */
			case 3:
				{
					const char *tok = dict[rnd() % (sizeof(dict) / sizeof(dict[0]))];
					size_t		n = strlen(tok);

					if (size + n < cap)
					{
						memmove(buf + pos + n, buf + pos, size - pos);
						memcpy(buf + pos, tok, n);
						size += n;
					}
				}
				break;
			case 4:				/* duplicate a range */
				if (size)
				{
					size_t		n,
								p = random_range(size, 32, &n);

					if (size + n < cap)
					{
						memmove(buf + pos + n, buf + pos, size - pos);
						memmove(buf + pos, buf + (p >= pos ? p + n : p), n);
						size += n;
					}
				}
				break;
			default:			/* splice in part of another input */
				if (ninputs)
				{
					const Input *o = &inputs[rnd() % ninputs];
					size_t		n = o->size ? rnd() % (o->size + 1) : 0;

					if (size + n < cap)
					{
						memmove(buf + pos + n, buf + pos, size - pos);
						memcpy(buf + pos, o->data, n);
						size += n;
					}
				}
				break;
		}
	}
	return size;
}

int
main(int argc, char **argv)
{
	const char *secs = getenv("GDL_FUZZ_SECONDS");
	const char *seed = getenv("GDL_FUZZ_SEED");
	int			i;
	long		runs = 0;

	for (i = 1; i < argc; i++)
		run_path(argv[i]);
	printf("fuzz_parse: %d inputs ran\n", ninputs);
	if (secs && atoi(secs) > 0)
	{
		time_t		end = time(NULL) + atoi(secs);
		size_t		cap = 8192;
		char	   *buf = malloc(cap);

		if (seed)
			rng_state ^= (uint64_t) strtoull(seed, NULL, 10) * 0x9E3779B97F4A7C15ull;
		if (ninputs == 0)
			add_input("p(X) :- edge(X, Y), !node(Y), X < 3.", 37);
		while (time(NULL) < end)
		{
			const Input *in = &inputs[rnd() % ninputs];
			size_t		size = in->size < cap ? in->size : cap - 1;

			memcpy(buf, in->data, size);
			size = mutate(buf, size, cap);
			LLVMFuzzerTestOneInput((const uint8_t *) buf, size);
			/* keep some mutations so edits compound */
			if (rnd() % 64 == 0 && ninputs < 4096)
				add_input(buf, size);
			runs++;
		}
		free(buf);
		printf("fuzz_parse: %ld random runs in %s s, no failures\n", runs, secs);
	}
	return 0;
}

#endif							/* GDL_FUZZ_STANDALONE */
