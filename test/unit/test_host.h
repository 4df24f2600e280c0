/*
 * test_host.h — the standalone host for gpudl's core: malloc-backed arena
 * memory, errors as longjmp, and a tiny assertion kit for test binaries.
 *
 *   gdl_test_host_install();
 *   GdlError *e = GDL_TRY(expr);   // NULL when expr raised nothing
 *   gdl_test_reset();              // free everything allocated since install
 */
#ifndef TEST_HOST_H
#define TEST_HOST_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/core/gdl_host.h"

extern void gdl_test_host_install(void);
extern void gdl_test_reset(void);
extern size_t gdl_test_live_bytes(void);
extern size_t gdl_test_peak_bytes(void);
extern void gdl_test_reset_peak(void);
extern void gdl_test_set_limit(size_t bytes);
/* An interrupt (a cancel) pending from `seconds` on; 0 clears it. */
extern void gdl_test_interrupt_after(double seconds);
/* CLOCK_MONOTONIC in seconds. */
extern double gdl_test_now_s(void);

/* Count the core's log lines that contain a text (GDL_TRACE's, for one). */
extern void gdl_test_watch_log(const char *text);
extern int	gdl_test_log_hits(void);

/* The error raised by the last failed GDL_TRY (valid until gdl_test_reset). */
extern GdlError gdl_test_last_error;
extern jmp_buf *gdl_test_jmp;

/*
 * Run a statement; evaluate to NULL on success or to the raised error.
 * Nesting is supported.
 */
#define GDL_TRY(stmt) \
	({ jmp_buf _jb; jmp_buf *_prev = gdl_test_jmp; GdlError *_err = NULL; \
	   if (setjmp(_jb) == 0) { gdl_test_jmp = &_jb; stmt; } \
	   else _err = &gdl_test_last_error; \
	   gdl_test_jmp = _prev; _err; })

extern int	gdl_test_failures;
extern int	gdl_test_checks;

#define CHECK(cond) do { gdl_test_checks++; if (!(cond)) { gdl_test_failures++; \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { gdl_test_checks++; if (!(cond)) { gdl_test_failures++; \
	fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* Print a summary and return the process exit code. */
extern int	gdl_test_summary(const char *name);

#endif							/* TEST_HOST_H */
