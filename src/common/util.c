#include "src/common/util.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static tw_die_hook die_hook TW_PER_PROCESS;

void
util_set_die_hook(tw_die_hook hook)
{
	die_hook = hook;
}

static void __attribute__((noreturn, format(printf, 2, 0)))
die_common(int is_bug, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (die_hook != NULL) {
		die_hook(is_bug, msg);
	} else {
		/* No role set up yet: stderr is all we have. */
		dprintf(2, "twinftpd: %s%s\n", is_bug ? "BUG: " : "", msg);
	}
	_exit(is_bug ? 2 : 1);
}

void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die_common(0, fmt, ap);
}

void
bug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die_common(1, fmt, ap);
}

int
tw_strlcpy(char *dst, const char *src, size_t dstsz)
{
	size_t n = strlen(src);

	if (dstsz == 0)
		return -1;
	if (n >= dstsz) {
		memcpy(dst, src, dstsz - 1);
		dst[dstsz - 1] = '\0';
		return -1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

int
tw_snprintf(char *dst, size_t dstsz, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, dstsz, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= dstsz)
		return -1;
	return n;
}

int
tw_parse_uint(const char *s, unsigned long long min, unsigned long long max,
	      unsigned long long *out)
{
	unsigned long long v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned d;

		if (*s < '0' || *s > '9')
			return -1;
		d = (unsigned)(*s - '0');
		if (v > (~0ULL - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
tw_strcaseeq(const char *a, const char *b)
{
	for (;; a++, b++) {
		char ca = *a, cb = *b;

		if (ca >= 'a' && ca <= 'z')
			ca = (char)(ca - 'a' + 'A');
		if (cb >= 'a' && cb <= 'z')
			cb = (char)(cb - 'a' + 'A');
		if (ca != cb)
			return 0;
		if (ca == '\0')
			return 1;
	}
}

/* close_range(2), or one close() at a time where it is refused. */
static void
close_fd_range(unsigned int first, unsigned int last)
{
	long max;
	unsigned int fd;

	if (close_range(first, last, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 1 << 20)
		max = 1 << 20;
	for (fd = first; fd <= last && fd < (unsigned int)max; fd++)
		close((int)fd);
}

void
tw_close_fds_except(const int *keep, size_t n)
{
	unsigned int next = 3;

	for (;;) {
		unsigned int lowest = ~0U;
		size_t i;

		/* The smallest kept descriptor at or above next. */
		for (i = 0; i < n; i++)
			if (keep[i] >= (int)next && (unsigned int)keep[i] < lowest)
				lowest = (unsigned int)keep[i];
		if (lowest == ~0U) {
			close_fd_range(next, ~0U);
			return;
		}
		if (lowest > next)
			close_fd_range(next, lowest - 1);
		next = lowest + 1;
	}
}

void *
tw_scratch_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("out of memory (%zu bytes)", len);
	return p;
}

void
tw_scratch_free(void *p, size_t len)
{
	if (p == NULL)
		return;
	explicit_bzero(p, len);
	munmap(p, len);
}

/* How far below the caller's frame pages are given back. */
#define STACK_TRIM_SPAN (256u * 1024u)

void __attribute__((noinline))
tw_stack_trim(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	long pagesize = sysconf(_SC_PAGESIZE);
	uintptr_t page = pagesize > 0 ? (uintptr_t)pagesize : 4096, top, bottom;

	/*
	 * Keep this function's page and the one below it (the red zone and
	 * madvise's own frame); everything lower is dead. Pages of the
	 * range that are not mapped are skipped by the kernel.
	 */
	top = (here & ~(page - 1)) - page;
	if (top <= STACK_TRIM_SPAN)
		return;
	bottom = top - STACK_TRIM_SPAN;
	(void)madvise((void *)bottom, (size_t)(top - bottom), MADV_DONTNEED);
}

void
tw_sched_idle(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)sched_setscheduler(0, SCHED_IDLE, &sp);
	(void)poll(NULL, 0, TW_IDLE_NAP_MS);
}

long
tw_recv_vouched(int fd, void *buf, size_t cap, int *pid)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct iovec iov = { buf, cap };
	struct msghdr msg;
	struct cmsghdr *c;
	struct ucred cred;
	int have_cred = 0;
	ssize_t len;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	len = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (len < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(cred))) {
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
			have_cred = 1;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			/* Nobody sends one: close what a sender slipped in. */
			int *fds = (int *)CMSG_DATA(c);
			size_t k, nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (k = 0; k < nfd; k++)
				(void)close(fds[k]);
		}
	}
	if (!have_cred || cred.pid <= 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0)
		return TW_RECV_DROPPED;
	*pid = (int)cred.pid;
	return (long)len;
}
