/*
 * Small shared helpers: the two ways to die, bounded string copies,
 * checked number parsing, and the memory habits of session processes
 * (per-process data, scratch pages, stack trimming). No process state
 * beyond the die hook.
 */
#ifndef TW_UTIL_H
#define TW_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#define TW_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * die(): the peer or the environment failed (a socket closed, a syscall
 * was refused, a config file is wrong). bug(): an invariant of ours broke.
 * Both log (through the hook installed by the process role) and exit; they
 * never return.
 */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void bug(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* The role installs where fatal messages go (stderr, the log, the IPC). */
typedef void (*tw_die_hook)(int is_bug, const char *msg);
void util_set_die_hook(tw_die_hook hook);

/*
 * Copies src into dst of size dstsz, always NUL-terminating.
 * Returns 0, or -1 when src did not fit (dst then holds a truncated copy).
 */
int tw_strlcpy(char *dst, const char *src, size_t dstsz);

/* snprintf that returns -1 on truncation or error, else the length. */
int tw_snprintf(char *dst, size_t dstsz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Parses a whole decimal unsigned number in [min, max]. No sign, no
 * leading/trailing junk, no empty string. Returns 0 or -1.
 */
int tw_parse_uint(const char *s, unsigned long long min, unsigned long long max,
		  unsigned long long *out);

/*
 * Closes every descriptor >= 3 except the n listed in keep (negative
 * entries are ignored). Used before a process starts a new role, so that
 * nothing the parent held leaks into it.
 */
void tw_close_fds_except(const int *keep, size_t n);

/* Case-insensitive ASCII compare of a command verb. */
int tw_strcaseeq(const char *a, const char *b);

/*
 * Memory of session processes. A page that a forked process and its
 * parent both still map is counted once; one that either writes after
 * the fork becomes private memory of both. So what every process writes
 * (its log and report descriptors, its role, small per-process state)
 * lives in .data, all of it in one or two pages, instead of scattered
 * over pages of .bss it would each make private.
 */
#define TW_PER_PROCESS __attribute__((section(".data.tw_per_process")))

/*
 * Memory for one-time work (a login's facts), in pages of its own that
 * tw_scratch_free() wipes and gives back: they do not stay private memory
 * of a long-lived process. Dies when there is no memory.
 */
void *tw_scratch_alloc(size_t len);
void tw_scratch_free(void *p, size_t len);

/*
 * Gives back the stack pages below the caller's frame (left dirty by
 * deeper calls that are over: login, sandbox set-up). Called where a
 * long-lived process settles into its loop. Best effort.
 */
void tw_stack_trim(void);

/*
 * A session's worker whose work is done (its client said goodbye) lets
 * its exit wait for CPU time nothing else wants: tearing down hundreds of
 * sessions that end at once must not delay the replies of the others.
 * SCHED_IDLE, which lowering needs no privilege for, then a nap of
 * TW_IDLE_NAP_MS: the kernel does not take the CPU from a running task
 * whose policy it lowered, and its queue may be empty while the other
 * CPU's holds the sessions still to answer; sleeping hands the CPU over
 * (the load balancer pulls them), and the exit runs when the CPU is
 * idle. SCHED_IDLE counts only among the server's own processes: a
 * daemon runs in a scheduling group of its own (its session's autogroup,
 * or its service's cgroup), which competes with other groups as one, so
 * the nap, 20 ms, is what keeps the exits of a burst of QUITs from
 * taking turns with the clients' other work on the machine while later
 * replies are still due. 300 QUITs at once, the server in its own
 * session (bench/RESULTS.md, stop 34): 0.03-0.07 s with a 1 ms nap,
 * 0.011 s with 20 ms. The session's end (the client's end of file, its
 * slot) comes that much later. Best effort. Not the monitor: it holds
 * the control connection and its exit is what the listener counts, so
 * the client's end of file and the freed slot come together, as they
 * must for a client that reconnects at once.
 */
#define TW_IDLE_NAP_MS 20
void tw_sched_idle(void);

/*
 * One datagram from a socket with SO_PASSCRED, never waiting: its length,
 * with the sender's pid as the kernel vouches for it (SCM_CREDENTIALS) in
 * *pid. TW_RECV_DROPPED for a datagram to ignore: no credentials, cut
 * (longer than cap, MSG_TRUNC or MSG_CTRUNC), descriptors it carried are
 * closed. -1 with errno when none was read (EAGAIN: none waits).
 */
#define TW_RECV_DROPPED (-2)
long tw_recv_vouched(int fd, void *buf, size_t cap, int *pid);

#endif
