/*
 * test_host.c — malloc/longjmp host for the core, used by the standalone
 * test binaries and the fuzz harness.  Every block is linked into a list so
 * gdl_test_reset() frees everything after an error, like a memory context.
 */
#include "test_host.h"

#include <string.h>
#include <time.h>

#include "../../src/exec/gdl_engine.h"

typedef struct Block
{
	struct Block *prev;
	struct Block *next;
	size_t		size;
	/* payload follows, 16-byte aligned */
	long double align_[];
} Block;

static Block *blocks;
static size_t live_bytes;
static size_t peak_bytes;		/* most live_bytes since gdl_test_reset_peak */
static size_t limit_bytes;		/* 0: none; else allocations past it raise (as pg_host.c) */
GdlError	gdl_test_last_error;
jmp_buf    *gdl_test_jmp;
int			gdl_test_failures;
int			gdl_test_checks;
static char last_message[2048];
static char last_detail[2048];
static char last_hint[1024];

/* Link a fresh block into the list. */
static void
link_block(Block *b)
{
	b->prev = NULL;
	b->next = blocks;
	if (blocks)
		blocks->prev = b;
	blocks = b;
}

/* Unlink a block from the list. */
static void
unlink_block(Block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* Raise out-of-memory through the error path. */
static void
oom(void)
{
	gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL, "out of memory");
}

/*
 * Count size more bytes; past the limit, raise out of memory as the
 * PostgreSQL host does past gpudl.host_memory_limit (before allocating).
 */
static void
t_account(size_t size)
{
	if (limit_bytes > 0 && live_bytes + size > limit_bytes)
		gdl_error(GDL_ERR_OUT_OF_MEMORY, NULL, NULL,
				  "the evaluation needs more than %zu MB of host memory", limit_bytes >> 20);
	if (live_bytes + size > peak_bytes)
		peak_bytes = live_bytes + size;
}

static void *
t_alloc(size_t size)
{
	Block	   *b;

	t_account(size);
	b = calloc(1, sizeof(Block) + size);

	if (b == NULL)
		oom();
	b->size = size;
	link_block(b);
	live_bytes += size;
	return b + 1;
}

static void *
t_realloc(void *ptr, size_t size)
{
	Block	   *b = ((Block *) ptr) - 1;
	Block	   *nb;

	if (size > b->size)
		t_account(size - b->size);
	unlink_block(b);
	live_bytes -= b->size;
	nb = realloc(b, sizeof(Block) + size);
	if (nb == NULL)
	{
		link_block(b);
		live_bytes += b->size;
		oom();
	}
	nb->size = size;
	link_block(nb);
	live_bytes += size;
	return nb + 1;
}

static void
t_free(void *ptr)
{
	Block	   *b = ((Block *) ptr) - 1;

	unlink_block(b);
	live_bytes -= b->size;
	free(b);
}

/* Copy the error into static storage (the arena may be reset) and jump. */
static void
t_error(const GdlError *err)
{
	snprintf(last_message, sizeof(last_message), "%s", err->message ? err->message : "");
	snprintf(last_detail, sizeof(last_detail), "%s", err->detail ? err->detail : "");
	snprintf(last_hint, sizeof(last_hint), "%s", err->hint ? err->hint : "");
	gdl_test_last_error.code = err->code;
	gdl_test_last_error.message = last_message;
	gdl_test_last_error.detail = err->detail ? last_detail : NULL;
	gdl_test_last_error.hint = err->hint ? last_hint : NULL;
	if (gdl_test_jmp == NULL)
	{
		fprintf(stderr, "uncaught gpudl error: %s\n", last_message);
		abort();
	}
	longjmp(*gdl_test_jmp, 1);
}

static char log_watch[256];	/* gdl_test_watch_log's text; "" counts nothing */
static int	log_hits;

/* The core's log: printed with GDL_TEST_VERBOSE, counted when it has the watched text. */
static void
t_log(const char *msg)
{
	if (getenv("GDL_TEST_VERBOSE"))
		fprintf(stderr, "log: %s\n", msg);
	if (log_watch[0] && strstr(msg, log_watch))
		log_hits++;
}

/* Count the log lines containing 'text' from now on (NULL or "": stop). */
void
gdl_test_watch_log(const char *text)
{
	snprintf(log_watch, sizeof(log_watch), "%s", text ? text : "");
	log_hits = 0;
}

/* Log lines with the watched text since gdl_test_watch_log. */
int
gdl_test_log_hits(void)
{
	return log_hits;
}

static double interrupt_at;	/* CLOCK_MONOTONIC seconds; 0: never */

/* Monotonic seconds (for the tests' own timings too). */
double
gdl_test_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Any thread: an interrupt is pending once the set time has passed. */
static bool
t_interrupt_pending(void)
{
	return interrupt_at > 0 && gdl_test_now_s() >= interrupt_at;
}

/* Raise the pending interrupt as PostgreSQL's cancel would. */
static void
t_check_interrupts(void)
{
	if (t_interrupt_pending())
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "canceling statement due to user request");
}

/* Let an interrupt be pending `seconds` from now (<= 0: never again). */
void
gdl_test_interrupt_after(double seconds)
{
	interrupt_at = seconds > 0 ? gdl_test_now_s() + seconds : 0;
}

static const GdlHost test_host = {
	t_alloc, t_realloc, t_free, t_error, t_check_interrupts, t_log, t_interrupt_pending
};

/* Install the test host hooks. */
void
gdl_test_host_install(void)
{
	gdl_set_host(&test_host);
	gdl_backend_register(GDL_DEVICE_CPU, gdl_cpu_backend());
}

/* Free every block still allocated. */
void
gdl_test_reset(void)
{
	while (blocks)
	{
		Block	   *b = blocks;

		blocks = b->next;
		free(b);
	}
	live_bytes = 0;
}

/* Bytes currently allocated through the host. */
size_t
gdl_test_live_bytes(void)
{
	return live_bytes;
}

/* Most bytes held since the last gdl_test_reset_peak(). */
size_t
gdl_test_peak_bytes(void)
{
	return peak_bytes;
}

/* Start counting the peak afresh. */
void
gdl_test_reset_peak(void)
{
	peak_bytes = live_bytes;
}

/* Raise out of memory when an allocation would pass 'bytes' (0: no limit). */
void
gdl_test_set_limit(size_t bytes)
{
	limit_bytes = bytes;
}

/* Print pass/fail counts; exit code 0 only when every check passed. */
int
gdl_test_summary(const char *name)
{
	printf("%s: %d checks, %d failures: %s\n", name, gdl_test_checks,
		   gdl_test_failures, gdl_test_failures ? "FAIL" : "ok");
	return gdl_test_failures ? 1 : 0;
}
