/*
 * gdl_host.c — the core's thin wrappers over the installed host hooks, and
 * a growable string buffer and growing arrays built on them.
 */
#include "gdl_host.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* blocks from gdl_alloc and gdl_alloc_uninit of at least this size ask for huge pages */
#define GDL_HUGE_MIN_BYTES ((size_t) 4 << 20)
#define GDL_HUGE_PAGE ((uintptr_t) 2 << 20)

static const GdlHost *current_host;

/* Install the host hooks; called once by the extension or a test. */
void
gdl_set_host(const GdlHost *host)
{
	current_host = host;
}

/*
 * Zeroed allocation from the host; the host raises on failure.  A big block
 * is zeroed here, after gdl_advise_huge, so its pages fault in 2 MB units.
 */
void *
gdl_alloc(size_t size)
{
	void	   *p;

	if (size < GDL_HUGE_MIN_BYTES)
		return current_host->alloc(size == 0 ? 1 : size);
	/* a big block: huge pages asked for before the zeroing touches it */
	p = gdl_alloc_uninit(size);
	memset(p, 0, size);
	return p;
}

/*
 * A block whose contents the caller writes in full (a sort's scratch, a
 * buffer filled by workers): not zeroed, which on blocks of gigabytes is a
 * second of memset the session cannot interrupt.  Through the host's
 * realloc, which never zeroes what it adds.
 */
void *
gdl_alloc_uninit(size_t size)
{
	void	   *p = gdl_realloc(gdl_alloc(1), size);

	gdl_advise_huge(p, size);
	return p;
}

/*
 * Ask the kernel to back the whole 2 MB pages inside a big block that is
 * not written yet with transparent huge pages (where THP is "madvise", as
 * on Debian): the block's first writes then fault once per 2 MB instead of
 * once per 4 KB.  The engine's sorts and joins write fresh blocks of
 * hundreds of megabytes a round; on a machine where a page fault costs
 * microseconds that was a third of a CPU run (docs/DESIGN.md, "Huge pages
 * for the CPU engine's big blocks").  Only a hint: failure changes nothing.
 */
void
gdl_advise_huge(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	uintptr_t	lo = ((uintptr_t) p + GDL_HUGE_PAGE - 1) & ~(GDL_HUGE_PAGE - 1);
	uintptr_t	hi = ((uintptr_t) p + size) & ~(GDL_HUGE_PAGE - 1);

	if (p != NULL && size >= GDL_HUGE_MIN_BYTES && hi > lo)
		(void) madvise((void *) lo, hi - lo, MADV_HUGEPAGE);
#endif
}

/* Resize a block from gdl_alloc (ptr may be NULL). */
void *
gdl_realloc(void *ptr, size_t size)
{
	if (ptr == NULL)
		return gdl_alloc(size);
	return current_host->realloc(ptr, size == 0 ? 1 : size);
}

/* Free a block from gdl_alloc (NULL is ignored). */
void
gdl_free(void *ptr)
{
	if (ptr != NULL)
		current_host->free(ptr);
}

/*
 * The array v (elements of elem bytes, room for *cap) with room for element
 * n: unchanged while n < *cap, else resized to 'first' elements, then to
 * twice as many each time.  The append step of every growing list.
 */
void *
gdl_grow(void *v, int n, int *cap, int first, size_t elem)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : first;
	return gdl_realloc(v, elem * *cap);
}

/* Copy a NUL-terminated string into host memory. */
char *
gdl_strdup(const char *s)
{
	return gdl_strndup(s, strlen(s));
}

/* Copy the first n bytes of s into a NUL-terminated host string. */
char *
gdl_strndup(const char *s, size_t n)
{
	char	   *r = gdl_alloc(n + 1);

	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

/* vsprintf into a fresh host string. */
static char *vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static char *
vformat(const char *fmt, va_list ap)
{
	va_list		ap2;
	int			n;
	char	   *r;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	r = gdl_alloc((size_t) n + 1);
	vsnprintf(r, (size_t) n + 1, fmt, ap);
	return r;
}

/* sprintf into a fresh host string. */
char *
gdl_sprintf(const char *fmt,...)
{
	va_list		ap;
	char	   *r;

	va_start(ap, fmt);
	r = vformat(fmt, ap);
	va_end(ap);
	return r;
}

/* Let the host abort a long loop (cancel, statement_timeout). */
void
gdl_check_interrupts(void)
{
	if (current_host->check_interrupts)
		current_host->check_interrupts();
}

/* Whether an interrupt is pending; callable from worker threads. */
bool
gdl_interrupt_pending(void)
{
	return current_host != NULL && current_host->interrupt_pending != NULL &&
		current_host->interrupt_pending();
}

/* After a parallel loop (calling thread): raise a pending interrupt. */
void
gdl_check_stop(void)
{
	if (!gdl_interrupt_pending())
		return;
	gdl_check_interrupts();
	if (gdl_interrupt_pending())
		gdl_error(GDL_ERR_INTERNAL, NULL, NULL, "gpudl: interrupted in the middle of a parallel step");
}

/* Debug logging through the host. */
void
gdl_log(const char *fmt,...)
{
	va_list		ap;
	char	   *msg;

	if (current_host->log == NULL)
		return;
	va_start(ap, fmt);
	msg = vformat(fmt, ap);
	va_end(ap);
	current_host->log(msg);
	gdl_free(msg);
}

/* Build a GdlError and hand it to the host, which never returns. */
void
gdl_error(GdlErrCode code, const char *detail, const char *hint,
		  const char *fmt,...)
{
	GdlError	err;
	va_list		ap;

	va_start(ap, fmt);
	err.code = code;
	err.message = vformat(fmt, ap);
	va_end(ap);
	err.detail = detail;
	err.hint = hint;
	current_host->error(&err);
	/* a host error hook must not return; make sure we never continue */
	abort();
}

/* Start an empty buffer. */
void
gdl_buf_init(GdlBuf *b)
{
	b->cap = 64;
	b->len = 0;
	b->data = gdl_alloc(b->cap);
}

/* Make room for n more bytes plus a terminating NUL. */
static void
buf_reserve(GdlBuf *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	while (b->len + n + 1 > b->cap)
		b->cap *= 2;
	b->data = gdl_realloc(b->data, b->cap);
}

/* Append formatted text. */
void
gdl_buf_append(GdlBuf *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_reserve(b, (size_t) n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t) n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t) n;
}

/* Append one character. */
void
gdl_buf_putc(GdlBuf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

/* Append n bytes of s. */
void
gdl_buf_putsn(GdlBuf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* Append a line (taken over, not copied) to a list of lines. */
void
gdl_lines_add(GdlLines *l, char *line)
{
	l->v = gdl_grow(l->v, l->n, &l->cap, 16, sizeof(char *));
	l->v[l->n++] = line;
}
