/*
 * The seccomp policies, one per process role: which syscalls each role may
 * make, and why. The mechanics (building and loading the filter, the SIGSYS
 * report) are in seccomp.c; this file is the part to audit.
 *
 * A policy is an ordered list of groups. A syscall belongs to the first
 * group of the policy that names it; later mentions are ignored. That is
 * how a sanitizer build lifts a refusal (its group comes before it) and
 * how a real rule beats a "glibc probe" errno (the probe group comes last).
 * Every allowed call is measured: tests/e2e/test_seccomp_usage.py runs
 * sessions under strace and fails on an entry no process under its group
 * made, unless the entry's line says "unused:" and why. A call no code
 * path makes is not listed at all.
 *
 * Anything no group names gets the default action: SIGSYS (SCMP_ACT_TRAP),
 * or a kernel log line with sandbox_log_only. Naming SIGSYS in
 * rt_sigaction is killed outright (SC_SIGACTION), or logged with
 * sandbox_log_only.
 *
 * Filters stack: a child inherits its parent's filter and adds its own,
 * and the strictest answer wins. So a role that forks another must allow
 * everything its child does before the child installs its own policy:
 * listener >= monitor >= post-login worker. The pre-login worker that
 * stays alive as a TLS session's relay keeps the pre-login filter (which
 * allows what the handshake needs) and stacks the relay's on top.
 *
 * Names are libseccomp's (SCMP_SYS), so the tables build on every
 * architecture; a name that does not exist on the build's architecture
 * (mmap2 on x86_64, open on aarch64) is skipped.
 *
 * Included only by seccomp.c.
 */
#ifndef TW_SECCOMP_POLICY_H
#define TW_SECCOMP_POLICY_H

#include <errno.h>
#include <seccomp.h>

enum sc_kind {
	SC_ALLOW,	/* allowed, any arguments */
	SC_ERRNO,	/* refused with errno `val`, the process goes on */
	SC_NOEXEC,	/* allowed when argument `val` (prot) lacks PROT_EXEC */
	SC_OPEN,	/* argument `val` holds open flags: no write, create,
			 * truncate or append bits unless write_enable */
	SC_OPEN_RO,	/* as SC_OPEN, but read-only even with write_enable */
	SC_IF_WRITE,	/* allowed only with write_enable, else default */
	SC_SOCK_TCP,	/* socket(AF_INET or AF_INET6, SOCK_STREAM, 0 or TCP),
			 * none with isolate_network (sandbox_worker_no_net) */
	SC_IF_NET,	/* allowed unless isolate_network */
	SC_SOCK_ROOT,	/* socket: AF_UNIX, AF_NETLINK, TCP or UDP */
	SC_SELF,	/* argument 0 is our own pid (tgkill): the installer's, filled in
			 * when a compiled policy is installed (SELF_PID_SLOT) */
	SC_FUTEX,	/* wait and wake operations only */
	SC_FCNTL,	/* flags, close-on-exec, dup, record locks */
	SC_SOCKOPT,	/* the few socket options an FTP session sets */
	SC_IOCTL,	/* FIONREAD only; TCGETS (isatty) gets ENOTTY */
	SC_RLIMIT_GET,	/* prlimit64 reading our own limits only */
	SC_MADV_DONTNEED,	/* madvise(..., MADV_DONTNEED): giving back
				 * pages of our own, nothing else */
	SC_CLONE_FLAGS,	/* clone/unshare flags (argument 0): new PID, IPC and
			 * network namespaces only, no user, mount, UTS or
			 * cgroup namespace */
	SC_NARROW,	/* prctl(PR_SET_NO_NEW_PRIVS, 1) and seccomp(
			 * SECCOMP_SET_MODE_FILTER, 0): a process adds a
			 * stricter filter to its own, which only narrows */
	SC_SOCK_DATA,	/* socket(AF_INET or AF_INET6, SOCK_STREAM, 0 or TCP),
			 * whatever isolate_network says (the monitor's) */
	SC_SIGKILL,	/* kill(pid, SIGKILL) only */
	SC_SCHED_IDLE,	/* sched_setscheduler(0, SCHED_IDLE, ...): lowering
			 * oneself (tw_sched_idle), nothing else */
	SC_IF_ANON_MKDIR,	/* with write_enable and anon_mkdir_write_enable */
	SC_IF_ANON_OTHER,	/* with write_enable and anon_other_write_enable */
	SC_OPEN_ANON,	/* as SC_OPEN, the write bits with write_enable and
			 * anon_upload_enable or anon_other_write_enable */
	SC_SIGACTION,	/* rt_sigaction: any signal's handler but SIGSYS's;
			 * naming SIGSYS kills the process outright (see
			 * g_worker_base) */
};

struct sc_rule {
	int nr;			/* SCMP_SYS(name); negative: not on this arch */
	enum sc_kind kind;
	int val;		/* errno or argument index, see the kind */
};

struct sc_group {
	const char *name;
	const struct sc_rule *rules;
	size_t nrules;
};

#define SC_GROUP(g) { #g, g, sizeof(g) / sizeof((g)[0]) }

/*
 * The protocol worker before login. It speaks FTP over its control socket
 * and IPC over its socketpair, both handed to it, in an empty chroot. It
 * cannot open files, create sockets, fork, signal others or change
 * credentials.
 */
static const struct sc_rule g_worker_base[] = {
	/* The control connection and the IPC channel. recv(MSG_PEEK) and
	 * send() are recvfrom/sendto on most architectures. */
	{ SCMP_SYS(read), SC_ALLOW, 0 },
	{ SCMP_SYS(write), SC_ALLOW, 0 },
	{ SCMP_SYS(recvfrom), SC_ALLOW, 0 },
	{ SCMP_SYS(sendto), SC_ALLOW, 0 },
	{ SCMP_SYS(recv), SC_ALLOW, 0 },
	{ SCMP_SYS(send), SC_ALLOW, 0 },
	{ SCMP_SYS(recvmsg), SC_ALLOW, 0 },	/* IPC, with SCM_RIGHTS */
	{ SCMP_SYS(sendmsg), SC_ALLOW, 0 },	/* also the SIGSYS report */
	{ SCMP_SYS(shutdown), SC_ALLOW, 0 },	/* unused: no worker calls it; the TLS relay (g_relay) keeps this filter under its own */
	{ SCMP_SYS(close), SC_ALLOW, 0 },
	{ SCMP_SYS(getsockname), SC_ALLOW, 0 },
	{ SCMP_SYS(getpeername), SC_ALLOW, 0 },	/* the pre-login worker's client (worker.c) */
	{ SCMP_SYS(getsockopt), SC_ALLOW, 0 },	/* unused: TCP_INFO of a slow reader's data connection (tcpwin.c), SO_ERROR of a PORT connect that did not complete at once (datasock.c): matters of timing */
	{ SCMP_SYS(setsockopt), SC_SOCKOPT, 0 },
	{ SCMP_SYS(fcntl), SC_FCNTL, 0 },	/* O_NONBLOCK, FD_CLOEXEC */
	{ SCMP_SYS(fcntl64), SC_FCNTL, 0 },
	{ SCMP_SYS(ioctl), SC_IOCTL, 0 },	/* unused: FIONREAD, only when the ABOR watch's peek stops at an urgent mark before the LF (ctrl.c), a matter of timing */
	{ SCMP_SYS(fstat), SC_ALLOW, 0 },	/* unused: fstat() before glibc 2.33; since, newfstatat */
	{ SCMP_SYS(fstat64), SC_ALLOW, 0 },
	{ SCMP_SYS(newfstatat), SC_ALLOW, 0 },	/* fstat(), stat() and lstat() since glibc 2.33 */
	{ SCMP_SYS(fstatat64), SC_ALLOW, 0 },

	/* Waiting and timeouts: poll deadlines; the one timer is a lock
	 * wait's tick (setitimer, g_worker_files_read). */
	{ SCMP_SYS(poll), SC_ALLOW, 0 },
	{ SCMP_SYS(ppoll), SC_ALLOW, 0 },	/* unused: poll() on arches without poll (aarch64) */
	{ SCMP_SYS(clock_gettime), SC_ALLOW, 0 },	/* unused: the vDSO answers, but not for every clock source */
	{ SCMP_SYS(clock_gettime64), SC_ALLOW, 0 },
	{ SCMP_SYS(gettimeofday), SC_ALLOW, 0 },	/* unused: as clock_gettime */
	{ SCMP_SYS(time), SC_ALLOW, 0 },	/* unused: as clock_gettime (listings, TLS) */

	/*
	 * Signals: a worker sets one handler, SIGALRM's while it waits for
	 * a lock (transfer.c file_lock); the SIGSYS report ends in
	 * raise() (rt_sigprocmask, getpid, gettid, tgkill).
	 *
	 * rt_sigaction(SIGSYS, ...) kills the process outright, with no
	 * handler run (SCMP_ACT_KILL_PROCESS), in every role: a forbidden
	 * syscall must not be survivable. The report handler, installed
	 * before the first filter and inherited over fork, reports and dies;
	 * a process that put its own handler in its place (or SIG_IGN)
	 * would carry on after every trapped call, free to probe the
	 * policy. The other ways around it need no rule: the old sigaction
	 * and signal syscalls are in no allowlist, so they trap; a trap's
	 * SIGSYS that is blocked (rt_sigprocmask) is delivered by the
	 * kernel with the default action, which kills; sigaltstack only
	 * moves where a handler runs. tests/unit/test_seccomp.c proves the
	 * handler, SIG_IGN and blocked cases in every role.
	 */
	{ SCMP_SYS(rt_sigaction), SC_SIGACTION, 0 },	/* the lock wait's SIGALRM; the rule kills a handler for SIGSYS outright (above) */
	{ SCMP_SYS(rt_sigprocmask), SC_ALLOW, 0 },	/* the lock wait unblocks SIGALRM (transfer.c file_lock); the SIGSYS report's raise() */
	{ SCMP_SYS(rt_sigreturn), SC_ALLOW, 0 },	/* the lock wait's tick handler returns (transfer.c file_lock); the report handler does not */
	{ SCMP_SYS(sigreturn), SC_ALLOW, 0 },
	{ SCMP_SYS(getpid), SC_ALLOW, 0 },	/* OpenSSL's fork check; the PASV port seed */
	{ SCMP_SYS(gettid), SC_ALLOW, 0 },	/* unused: only in the SIGSYS report's raise(), on a forbidden call (tests/unit/test_seccomp.c) */
	{ SCMP_SYS(tgkill), SC_SELF, 0 },	/* unused: as gettid; never another process */
	/* A poll with a timeout that a stop interrupted (SIGSTOP, a
	 * debugger, the cgroup freezer) goes on through restart_syscall
	 * when the process continues: without it a paused session dies. */
	{ SCMP_SYS(restart_syscall), SC_ALLOW, 0 },	/* unused: only after a stop (tests/e2e/test_faults.py pauses every role) */
	/* After QUIT's 221, the exit waits for idle CPU (tw_sched_idle). */
	{ SCMP_SYS(sched_setscheduler), SC_SCHED_IDLE, 0 },

	/* Memory: malloc, never executable mappings (no injected code). */
	{ SCMP_SYS(brk), SC_ALLOW, 0 },
	{ SCMP_SYS(mmap), SC_NOEXEC, 2 },
	{ SCMP_SYS(mmap2), SC_NOEXEC, 2 },
	{ SCMP_SYS(munmap), SC_ALLOW, 0 },
	{ SCMP_SYS(mremap), SC_ALLOW, 0 },	/* unused: realloc() of a block glibc mmapped, when OpenSSL grows a large buffer (src/tls_heap.c falls back to realloc) */
	/* glibc's malloc seed; OpenSSL's DRBG (TLS handshakes and records,
	 * reseeded after fork). */
	{ SCMP_SYS(getrandom), SC_ALLOW, 0 },

	{ SCMP_SYS(exit_group), SC_ALLOW, 0 },
};

/*
 * The pre-login worker of a TLS session turns relay at the login and
 * narrows its own filter (src/relay.c): it may add a filter.
 */
static const struct sc_rule g_worker_narrow[] = {
	{ SCMP_SYS(prctl), SC_NARROW, 0 },
	{ SCMP_SYS(seccomp), SC_NARROW, 0 },
};

/*
 * The TLS relay (src/relay.c): bytes between the client's TLS stream and
 * the user's worker's socketpair, both already open. It stacks on the
 * pre-login filter, so each entry here is also there.
 */
static const struct sc_rule g_relay[] = {
	{ SCMP_SYS(read), SC_ALLOW, 0 },	/* TLS records (OpenSSL's socket BIO) */
	{ SCMP_SYS(write), SC_ALLOW, 0 },
	{ SCMP_SYS(recvfrom), SC_ALLOW, 0 },	/* the socketpair: recv() */
	{ SCMP_SYS(sendto), SC_ALLOW, 0 },	/* send(MSG_NOSIGNAL) */
	{ SCMP_SYS(shutdown), SC_ALLOW, 0 },	/* unused: the client left first (relay.c): tell the worker; at a QUIT either side may close first */
	{ SCMP_SYS(close), SC_ALLOW, 0 },	/* unused: tls_close's end of a relay the client left first (relay.c); the monitor kills it otherwise */
	{ SCMP_SYS(poll), SC_ALLOW, 0 },
	{ SCMP_SYS(ppoll), SC_ALLOW, 0 },	/* unused: poll() on arches without poll (aarch64) */
	{ SCMP_SYS(clock_gettime), SC_ALLOW, 0 },	/* unused: close_notify's bound, where the vDSO does not answer */
	{ SCMP_SYS(clock_gettime64), SC_ALLOW, 0 },
	{ SCMP_SYS(getrandom), SC_ALLOW, 0 },	/* unused: OpenSSL's DRBG reseeding, after many records or minutes */
	{ SCMP_SYS(brk), SC_ALLOW, 0 },	/* unused: OpenSSL's record buffers, allocated at the handshake; again for a larger record */
	{ SCMP_SYS(mmap), SC_NOEXEC, 2 },	/* unused: as brk */
	{ SCMP_SYS(mmap2), SC_NOEXEC, 2 },
	{ SCMP_SYS(munmap), SC_ALLOW, 0 },	/* unused: as brk */
	{ SCMP_SYS(mremap), SC_ALLOW, 0 },	/* unused: as brk */
	/* The SIGSYS report: sent to the monitor, then raise(). */
	{ SCMP_SYS(sendmsg), SC_ALLOW, 0 },	/* unused: only on a forbidden call (tests/unit/test_seccomp.c) */
	{ SCMP_SYS(rt_sigaction), SC_SIGACTION, 0 },	/* unused: as in g_worker_base */
	{ SCMP_SYS(rt_sigprocmask), SC_ALLOW, 0 },	/* unused: as sendmsg */
	{ SCMP_SYS(rt_sigreturn), SC_ALLOW, 0 },	/* unused: a handler's return; the relay sets none, and the SIGSYS report's does not return */
	{ SCMP_SYS(getpid), SC_ALLOW, 0 },	/* unused: as sendmsg; OpenSSL's fork check */
	{ SCMP_SYS(gettid), SC_ALLOW, 0 },	/* unused: as sendmsg */
	{ SCMP_SYS(tgkill), SC_SELF, 0 },	/* unused: as sendmsg */
	{ SCMP_SYS(restart_syscall), SC_ALLOW, 0 },	/* unused: as in g_worker_base */
	{ SCMP_SYS(exit_group), SC_ALLOW, 0 },
};

/* Before login there is nothing to open: the chroot is empty. A refusal
 * rather than a kill, because glibc may look for a file lazily (time zone,
 * message catalogues) and cope when it is missing. */
static const struct sc_rule g_worker_no_files[] = {
	{ SCMP_SYS(open), SC_ERRNO, EACCES },
	{ SCMP_SYS(openat), SC_ERRNO, EACCES },
};

/* The post-login worker serves files as the user (read side). */
static const struct sc_rule g_worker_files_read[] = {
	{ SCMP_SYS(open), SC_OPEN, 1 },	/* unused: glibc's open() calls openat */
	{ SCMP_SYS(openat), SC_OPEN, 2 },
	{ SCMP_SYS(lseek), SC_ALLOW, 0 },	/* REST */
	{ SCMP_SYS(pread64), SC_ALLOW, 0 },	/* REST + RETR (ASCII, TLS) */
	{ SCMP_SYS(sendfile), SC_ALLOW, 0 },	/* RETR in binary mode */
	{ SCMP_SYS(sendfile64), SC_ALLOW, 0 },
	{ SCMP_SYS(stat), SC_ALLOW, 0 },	/* unused: stat() before glibc 2.33 */
	{ SCMP_SYS(lstat), SC_ALLOW, 0 },	/* unused: lstat() before glibc 2.33 */
	{ SCMP_SYS(stat64), SC_ALLOW, 0 },
	{ SCMP_SYS(lstat64), SC_ALLOW, 0 },
	{ SCMP_SYS(getdents64), SC_ALLOW, 0 },	/* LIST, NLST, MLSD */
	{ SCMP_SYS(readlink), SC_ALLOW, 0 },	/* LIST shows link targets */
	{ SCMP_SYS(readlinkat), SC_ALLOW, 0 },	/* unused: readlink() where there is no readlink syscall (aarch64) */
	{ SCMP_SYS(access), SC_ALLOW, 0 },
	{ SCMP_SYS(faccessat), SC_ALLOW, 0 },	/* unused: access() where there is no access syscall (aarch64) */
	{ SCMP_SYS(getcwd), SC_ALLOW, 0 },	/* PWD */
	/* lock_upload_files: SIGALRM every LOCK_CHECK_MS interrupts the
	 * blocked F_OFD_SETLKW to look at the client and the deadline. */
	{ SCMP_SYS(setitimer), SC_ALLOW, 0 },
	{ SCMP_SYS(chdir), SC_ALLOW, 0 },	/* CWD, CDUP */
	{ SCMP_SYS(umask), SC_ALLOW, 0 },	/* SITE UMASK */
	{ SCMP_SYS(sysinfo), SC_ALLOW, 0 },	/* unused: glibc's qsort asks the memory size (sysconf(_SC_PHYS_PAGES)) before sorting over 1 KB of pointers: a listing of more than 128 names (test_vsftpd's ls -R test) */
};

/* Changes to the file system, by a local user: only with write_enable.
 * Refused bits of open() are in SC_OPEN. glibc calls the *at forms only
 * on architectures without the older calls (aarch64). */
static const struct sc_rule g_worker_files_write[] = {
	{ SCMP_SYS(ftruncate), SC_IF_WRITE, 0 },	/* STOR over a file */
	{ SCMP_SYS(ftruncate64), SC_IF_WRITE, 0 },
	{ SCMP_SYS(mkdir), SC_IF_WRITE, 0 },	/* MKD */
	{ SCMP_SYS(mkdirat), SC_IF_WRITE, 0 },	/* unused: mkdir() where there is no mkdir syscall (aarch64) */
	{ SCMP_SYS(rmdir), SC_IF_WRITE, 0 },	/* RMD */
	{ SCMP_SYS(unlink), SC_IF_WRITE, 0 },	/* DELE */
	{ SCMP_SYS(unlinkat), SC_IF_WRITE, 0 },	/* unused: unlink() and rmdir() where those syscalls do not exist (aarch64) */
	{ SCMP_SYS(rename), SC_IF_WRITE, 0 },	/* RNFR/RNTO */
	{ SCMP_SYS(renameat), SC_IF_WRITE, 0 },	/* unused: rename() on arches without rename (glibc before 2.32 there) */
	{ SCMP_SYS(renameat2), SC_IF_WRITE, 0 },	/* unused: rename() on arches with neither rename nor renameat (riscv) */
	{ SCMP_SYS(chmod), SC_IF_WRITE, 0 },	/* SITE CHMOD */
	{ SCMP_SYS(fchmodat), SC_IF_WRITE, 0 },	/* unused: chmod() where there is no chmod syscall (aarch64) */
	{ SCMP_SYS(utimensat), SC_IF_WRITE, 0 },	/* MDTM with a time, MFMT (mdtm_write) */
};

/*
 * STOR/STOU in binary without TLS or a rate limit: socket -> pipe -> file
 * (transfer.c recv_file). Harmless without a file open for writing, which
 * open()'s rules decide.
 */
static const struct sc_rule g_worker_splice[] = {
	{ SCMP_SYS(pipe2), SC_ALLOW, 0 },
	{ SCMP_SYS(splice), SC_ALLOW, 0 },
};

/*
 * An anonymous session's: open() refuses every write bit unless uploads
 * (anon_upload_enable) or overwrites and appends (anon_other_write_enable)
 * are on; MKD needs anon_mkdir_write_enable; DELE, RMD, RNFR/RNTO and a
 * STOR over a file need anon_other_write_enable; SITE CHMOD is never an
 * anonymous user's (chmod is in no anonymous list). Before the shared
 * read group, whose open rule it overrides.
 */
static const struct sc_rule g_worker_open_anon[] = {
	{ SCMP_SYS(open), SC_OPEN_ANON, 1 },	/* unused: open() where glibc does not call openat (none today) */
	{ SCMP_SYS(openat), SC_OPEN_ANON, 2 },
};

static const struct sc_rule g_worker_files_write_anon[] = {
	{ SCMP_SYS(mkdir), SC_IF_ANON_MKDIR, 0 },	/* MKD */
	{ SCMP_SYS(mkdirat), SC_IF_ANON_MKDIR, 0 },	/* unused: as in g_worker_files_write */
	{ SCMP_SYS(ftruncate), SC_IF_ANON_OTHER, 0 },	/* STOR over a file */
	{ SCMP_SYS(ftruncate64), SC_IF_ANON_OTHER, 0 },
	{ SCMP_SYS(rmdir), SC_IF_ANON_OTHER, 0 },	/* RMD */
	{ SCMP_SYS(unlink), SC_IF_ANON_OTHER, 0 },	/* DELE */
	{ SCMP_SYS(unlinkat), SC_IF_ANON_OTHER, 0 },	/* unused: as in g_worker_files_write */
	{ SCMP_SYS(rename), SC_IF_ANON_OTHER, 0 },	/* RNFR/RNTO */
	{ SCMP_SYS(renameat), SC_IF_ANON_OTHER, 0 },	/* unused: as in g_worker_files_write */
	{ SCMP_SYS(renameat2), SC_IF_ANON_OTHER, 0 },	/* unused: as in g_worker_files_write */
	{ SCMP_SYS(utimensat), SC_IF_ANON_OTHER, 0 },	/* MDTM with a time, MFMT (mdtm_write) */
};

/* Data connections the worker opens itself: PASV listens, PORT connects.
 * TCP only; port 20 and isolate_network sockets come from the monitor. */
static const struct sc_rule g_worker_net[] = {
	{ SCMP_SYS(socket), SC_SOCK_TCP, 0 },
	{ SCMP_SYS(bind), SC_IF_NET, 0 },
	{ SCMP_SYS(listen), SC_IF_NET, 0 },
	{ SCMP_SYS(accept4), SC_ALLOW, 0 },	/* also the monitor's PASV socket */
	{ SCMP_SYS(connect), SC_IF_NET, 0 },
};

/*
 * Root roles: the listener after its sockets are bound and the session
 * monitor before login. They parse no client bytes, but run PAM and NSS
 * (which dlopen modules, so executable mappings are allowed), fork
 * sessions, change credentials and load their children's filters.
 * Generous, yet no exec, no tracing, no mounts, no modules, no kexec, no
 * bpf, no user namespaces. pam_exec and other modules that run programs
 * cannot work under it. What PAM and NSS modules may call cannot be
 * measured with the tests' pam_matrix and nss_wrapper: those entries say
 * "unused: PAM and NSS modules" and what calls them.
 */
static const struct sc_rule g_root_base[] = {
	/* Files: PAM and NSS databases, chroot_list_file and userlist_file
	 * at login, the config at a reload. (The log files are opened
	 * before any filter, and again at a reload.) */
	{ SCMP_SYS(read), SC_ALLOW, 0 },
	{ SCMP_SYS(write), SC_ALLOW, 0 },
	{ SCMP_SYS(readv), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): stdio's buffered reads */
	{ SCMP_SYS(writev), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): stdio, syslog(3) from a module */
	{ SCMP_SYS(pread64), SC_ALLOW, 0 },
	{ SCMP_SYS(pwrite64), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_lastlog, pam_tally2/faillock records */
	{ SCMP_SYS(open), SC_ALLOW, 0 },	/* unused: glibc's open() calls openat */
	{ SCMP_SYS(openat), SC_ALLOW, 0 },
	{ SCMP_SYS(close), SC_ALLOW, 0 },
	{ SCMP_SYS(lseek), SC_ALLOW, 0 },
	{ SCMP_SYS(_llseek), SC_ALLOW, 0 },
	{ SCMP_SYS(fstat), SC_ALLOW, 0 },	/* unused: fstat() before glibc 2.33 */
	{ SCMP_SYS(fstat64), SC_ALLOW, 0 },
	{ SCMP_SYS(stat), SC_ALLOW, 0 },	/* unused: stat() before glibc 2.33 */
	{ SCMP_SYS(lstat), SC_ALLOW, 0 },	/* unused: lstat() before glibc 2.33 */
	{ SCMP_SYS(stat64), SC_ALLOW, 0 },
	{ SCMP_SYS(lstat64), SC_ALLOW, 0 },
	{ SCMP_SYS(newfstatat), SC_ALLOW, 0 },
	{ SCMP_SYS(fstatat64), SC_ALLOW, 0 },
	{ SCMP_SYS(statx), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): statx() of a newer libc or module */
	{ SCMP_SYS(statfs), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_selinux, glibc's shm probes */
	{ SCMP_SYS(fstatfs), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): as statfs */
	{ SCMP_SYS(getdents64), SC_ALLOW, 0 },
	{ SCMP_SYS(readlink), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): /proc/self/exe and ttyname; the listener at a reload that sets ssl_enable (finding the TLS module) */
	{ SCMP_SYS(readlinkat), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): as readlink, on aarch64 */
	{ SCMP_SYS(access), SC_ALLOW, 0 },
	{ SCMP_SYS(faccessat), SC_ALLOW, 0 },	/* unused: access() where there is no access syscall (aarch64) */
	{ SCMP_SYS(faccessat2), SC_ALLOW, 0 },	/* unused: access() of a newer glibc (2.33+ with AT_ flags) */
	{ SCMP_SYS(getcwd), SC_ALLOW, 0 },
	{ SCMP_SYS(chdir), SC_ALLOW, 0 },
	{ SCMP_SYS(umask), SC_ALLOW, 0 },
	{ SCMP_SYS(mkdir), SC_ALLOW, 0 },
	{ SCMP_SYS(mkdirat), SC_ALLOW, 0 },	/* unused: mkdir() on aarch64 (the workers' MKD) */
	{ SCMP_SYS(unlink), SC_ALLOW, 0 },	/* PAM modules' lock and temporary files (pam_wrapper's in TW_E2E_PAM=wrapper tests); DELE */
	{ SCMP_SYS(unlinkat), SC_ALLOW, 0 },	/* unused: the workers' DELE and RMD on aarch64; PAM modules' files (pam_wrapper's in TW_E2E_PAM=wrapper tests) */
	{ SCMP_SYS(rename), SC_ALLOW, 0 },
	{ SCMP_SYS(renameat), SC_ALLOW, 0 },	/* unused: rename() on arches without rename (the workers' RNTO) */
	{ SCMP_SYS(chmod), SC_ALLOW, 0 },
	{ SCMP_SYS(fchmod), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_unix writing a shadow or opasswd file */
	{ SCMP_SYS(fchmodat), SC_ALLOW, 0 },	/* unused: chmod() on aarch64 (the workers' SITE CHMOD) */
	{ SCMP_SYS(fchown), SC_ALLOW, 0 },	/* unused: chown_uploads, by the post-login monitor, whose filter stacks on this one */
	{ SCMP_SYS(ftruncate), SC_ALLOW, 0 },
	{ SCMP_SYS(fsync), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_unix, pam_faillock records */
	{ SCMP_SYS(fdatasync), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): as fsync */
	{ SCMP_SYS(flock), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): lastlog, faillog, nss files locks */
	{ SCMP_SYS(fcntl), SC_ALLOW, 0 },
	{ SCMP_SYS(fcntl64), SC_ALLOW, 0 },
	{ SCMP_SYS(ioctl), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): isatty() and terminal probes */
	{ SCMP_SYS(dup), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): fdopen() and friends */
	{ SCMP_SYS(dup2), SC_ALLOW, 0 },
	{ SCMP_SYS(dup3), SC_ALLOW, 0 },	/* unused: dup2() on aarch64 */
	{ SCMP_SYS(pipe), SC_ALLOW, 0 },	/* unused: pipe() of an older glibc (pipe2 since) */
	{ SCMP_SYS(pipe2), SC_ALLOW, 0 },
	{ SCMP_SYS(utimensat), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_lastlog, pam_motd stamps */

	/* Sockets: IPC pairs, fd hand-off, syslog and nscd (AF_UNIX), the
	 * audit netlink socket of libpam, port-20 and isolate_network data
	 * sockets, DNS for PAM's rhost. */
	{ SCMP_SYS(socket), SC_SOCK_ROOT, 0 },
	{ SCMP_SYS(socketpair), SC_ALLOW, 0 },
	{ SCMP_SYS(bind), SC_ALLOW, 0 },
	{ SCMP_SYS(listen), SC_ALLOW, 0 },
	{ SCMP_SYS(accept4), SC_ALLOW, 0 },
	{ SCMP_SYS(connect), SC_ALLOW, 0 },
	{ SCMP_SYS(shutdown), SC_ALLOW, 0 },	/* unused: a ready pair whose worker died refuses hand-offs (session.c); the relay's below */
	{ SCMP_SYS(getsockname), SC_ALLOW, 0 },
	{ SCMP_SYS(getpeername), SC_ALLOW, 0 },
	{ SCMP_SYS(getsockopt), SC_ALLOW, 0 },
	{ SCMP_SYS(setsockopt), SC_ALLOW, 0 },
	{ SCMP_SYS(recvfrom), SC_ALLOW, 0 },
	{ SCMP_SYS(sendto), SC_ALLOW, 0 },
	{ SCMP_SYS(recv), SC_ALLOW, 0 },
	{ SCMP_SYS(send), SC_ALLOW, 0 },
	{ SCMP_SYS(recvmsg), SC_ALLOW, 0 },
	{ SCMP_SYS(sendmsg), SC_ALLOW, 0 },
	{ SCMP_SYS(sendmmsg), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): glibc's resolver (a PAM rhost lookup) */
	{ SCMP_SYS(socketcall), SC_ALLOW, 0 },	/* i386: every socket call */

	/* Waiting, time, signals (the listener's through a signalfd). */
	{ SCMP_SYS(poll), SC_ALLOW, 0 },
	{ SCMP_SYS(ppoll), SC_ALLOW, 0 },	/* unused: poll() on arches without poll (aarch64) */
	{ SCMP_SYS(select), SC_ALLOW, 0 },	/* unused: PAM modules (the run's pam_matrix does not): Linux-PAM's fail delay (pam_fail_delay, pam_pwdfile) sleeps in select() */
	{ SCMP_SYS(pselect6), SC_ALLOW, 0 },	/* unused: as select, where glibc's select() calls pselect6 */
	{ SCMP_SYS(alarm), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): lock timeouts (lckpwdf, pam_pwdfile) */
	{ SCMP_SYS(setitimer), SC_ALLOW, 0 },	/* the post-login workers' lock wait (g_worker_files_read); PAM modules' alarm() where it is an itimer */
	{ SCMP_SYS(clock_gettime), SC_ALLOW, 0 },	/* unused: the vDSO answers, but not for every clock source */
	{ SCMP_SYS(clock_gettime64), SC_ALLOW, 0 },
	{ SCMP_SYS(gettimeofday), SC_ALLOW, 0 },	/* unused: as clock_gettime */
	{ SCMP_SYS(time), SC_ALLOW, 0 },	/* unused: as clock_gettime */
	{ SCMP_SYS(nanosleep), SC_ALLOW, 0 },	/* unused: sleep() before glibc 2.31 (clock_nanosleep since) */
	{ SCMP_SYS(clock_nanosleep), SC_ALLOW, 0 },	/* delay_failed_login; the relay drain; the batched shutdown's naps */
	/* Never a SIGSYS handler: see rt_sigaction in g_worker_base. */
	{ SCMP_SYS(rt_sigaction), SC_SIGACTION, 0 },
	{ SCMP_SYS(rt_sigprocmask), SC_ALLOW, 0 },
	{ SCMP_SYS(rt_sigreturn), SC_ALLOW, 0 },	/* the post-login workers' lock wait tick (g_worker_base); a PAM module's handler (pam_unix's SIGCHLD around its helper) */
	{ SCMP_SYS(sigreturn), SC_ALLOW, 0 },
	{ SCMP_SYS(restart_syscall), SC_ALLOW, 0 },	/* unused: a call a PAM module's signal handler interrupted, or a stop (as in g_worker_base) */
	{ SCMP_SYS(kill), SC_ALLOW, 0 },	/* ending sessions; kernel checks */
	{ SCMP_SYS(tgkill), SC_ALLOW, 0 },	/* unused: raise() in a PAM module or in the SIGSYS report */

	/* Memory. PAM modules, NSS libraries and libwrap (tcp_wrappers=YES) are dlopen()ed. */
	{ SCMP_SYS(brk), SC_ALLOW, 0 },
	{ SCMP_SYS(mmap), SC_ALLOW, 0 },
	{ SCMP_SYS(mmap2), SC_ALLOW, 0 },
	{ SCMP_SYS(mprotect), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): dlopen() of a module the listener did not preload, or of libwrap at a reload that sets tcp_wrappers */
	{ SCMP_SYS(munmap), SC_ALLOW, 0 },
	{ SCMP_SYS(mremap), SC_ALLOW, 0 },	/* unused: realloc() of a large block */
	{ SCMP_SYS(madvise), SC_ALLOW, 0 },
	{ SCMP_SYS(futex), SC_ALLOW, 0 },

	/* Our own state. */
	{ SCMP_SYS(getpid), SC_ALLOW, 0 },
	{ SCMP_SYS(gettid), SC_ALLOW, 0 },	/* unused: as tgkill */
	{ SCMP_SYS(getppid), SC_ALLOW, 0 },
	{ SCMP_SYS(getuid), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_unix's checks of who calls */
	{ SCMP_SYS(geteuid), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): as getuid */
	{ SCMP_SYS(getgid), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): as getuid */
	{ SCMP_SYS(getegid), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): as getuid */
	{ SCMP_SYS(getresuid), SC_ALLOW, 0 },
	{ SCMP_SYS(getresgid), SC_ALLOW, 0 },
	{ SCMP_SYS(getgroups), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_group, initgroups checks */
	{ SCMP_SYS(capget), SC_ALLOW, 0 },
	{ SCMP_SYS(getrlimit), SC_ALLOW, 0 },	/* unused: getrlimit() where glibc does not use prlimit64 */
	{ SCMP_SYS(ugetrlimit), SC_ALLOW, 0 },
	{ SCMP_SYS(prlimit64), SC_RLIMIT_GET, 0 },	/* g_root_spawn may set */
	{ SCMP_SYS(uname), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): pam_unix and the resolver ask the host name */
	{ SCMP_SYS(sched_getaffinity), SC_ALLOW, 0 },	/* unused: PAM and NSS modules (the run's pam_matrix and nss_wrapper do not): sysconf(_SC_NPROCESSORS_*) in a library */
	{ SCMP_SYS(getrandom), SC_ALLOW, 0 },
	/* Filters stack: what the workers below may do, the listener's and
	 * the monitor's filters must allow too (their own checks are in the
	 * worker policies, which are installed last and are narrower). */
	{ SCMP_SYS(sendfile), SC_ALLOW, 0 },
	{ SCMP_SYS(sendfile64), SC_ALLOW, 0 },
	{ SCMP_SYS(splice), SC_ALLOW, 0 },	/* the workers' spliced STOR (g_worker_splice) */
	{ SCMP_SYS(sysinfo), SC_ALLOW, 0 },	/* unused: the workers' listings of large directories (g_worker_files_read) */
	{ SCMP_SYS(ftruncate64), SC_ALLOW, 0 },
	{ SCMP_SYS(rmdir), SC_ALLOW, 0 },
	{ SCMP_SYS(renameat2), SC_ALLOW, 0 },	/* unused: rename() where there is neither rename nor renameat (riscv) */
	{ SCMP_SYS(sched_setscheduler), SC_ALLOW, 0 },	/* the PAM child runs */
	{ SCMP_SYS(getpriority), SC_ALLOW, 0 },	/* SCHED_IDLE, or nice() */
	{ SCMP_SYS(setpriority), SC_ALLOW, 0 },	/* where that is refused */
	{ SCMP_SYS(wait4), SC_ALLOW, 0 },	/* reaping sessions / workers */
	{ SCMP_SYS(waitid), SC_ALLOW, 0 },	/* unused: waitpid() of a libc that calls waitid */
	{ SCMP_SYS(exit_group), SC_ALLOW, 0 },
};

/*
 * Creating and caging session processes: fork, the one credential change
 * (creds_become) and the child's own filter. Filters stack, so whoever
 * forks a sandboxed child must allow what the child does before its own
 * filter is in place.
 */
static const struct sc_rule g_root_spawn[] = {
	{ SCMP_SYS(clone), SC_CLONE_FLAGS, 0 },	/* fork(); flags are arg 0 */
	{ SCMP_SYS(unshare), SC_CLONE_FLAGS, 0 },	/* unused: the start's namespace probes run before the filter; kept for PAM's pam_namespace */
	{ SCMP_SYS(setns), SC_ALLOW, 0 },	/* workers join the empty network namespace */
	/* Every new session process closes what it inherited in one call;
	 * refused, the fallback is one close() per possible descriptor:
	 * 20,000 of them under a raised fd limit, milliseconds per fork. */
	{ SCMP_SYS(close_range), SC_ALLOW, 0 },
	{ SCMP_SYS(setgroups), SC_ALLOW, 0 },
	{ SCMP_SYS(setgroups32), SC_ALLOW, 0 },
	{ SCMP_SYS(setresgid), SC_ALLOW, 0 },
	{ SCMP_SYS(setresgid32), SC_ALLOW, 0 },
	{ SCMP_SYS(setresuid), SC_ALLOW, 0 },
	{ SCMP_SYS(setresuid32), SC_ALLOW, 0 },
	{ SCMP_SYS(setgid), SC_ALLOW, 0 },	/* PAM modules use the */
	{ SCMP_SYS(setuid), SC_ALLOW, 0 },	/* older calls */
	{ SCMP_SYS(setregid), SC_ALLOW, 0 },	/* unused: PAM modules (pam_unix's helper set-up) */
	{ SCMP_SYS(setreuid), SC_ALLOW, 0 },	/* unused: as setregid */
	{ SCMP_SYS(setfsgid), SC_ALLOW, 0 },	/* unused: PAM modules reading a user's files (pam_env, pam_xauth) */
	{ SCMP_SYS(setfsuid), SC_ALLOW, 0 },	/* unused: as setfsgid */
	{ SCMP_SYS(chroot), SC_ALLOW, 0 },
	{ SCMP_SYS(capset), SC_ALLOW, 0 },
	{ SCMP_SYS(prctl), SC_ALLOW, 0 },	/* NO_NEW_PRIVS, CAPBSET_DROP */
	{ SCMP_SYS(setrlimit), SC_ALLOW, 0 },	/* unused: setrlimit() where glibc does not use prlimit64 */
	{ SCMP_SYS(prlimit64), SC_ALLOW, 0 },
	{ SCMP_SYS(seccomp), SC_ALLOW, 0 },	/* the child's filter */
	{ SCMP_SYS(set_robust_list), SC_ALLOW, 0 },	/* libc in a new child */
};

/*
 * The session monitor after login (privsep/monitor.c): it has become the
 * user, chrooted to secure_chroot_dir, and does three things: answers the
 * post-login rows of the permit table (log lines, transfer lines, and
 * with isolate_network or connect_from_port_20 data sockets), sends its
 * lines to the log writer, and ends its children. No files, no fork, no
 * credentials. Stacks on the pre-login monitor's filter.
 */
static const struct sc_rule g_monitor_postlogin[] = {
	/* Requests and replies with descriptors (SCM_RIGHTS), and the
	 * worker's death. */
	{ SCMP_SYS(recvmsg), SC_ALLOW, 0 },
	{ SCMP_SYS(sendmsg), SC_ALLOW, 0 },
	/* send(): log records to the log writer (log.h); reply_final's 421
	 * when the worker died. */
	{ SCMP_SYS(sendto), SC_ALLOW, 0 },
	{ SCMP_SYS(send), SC_ALLOW, 0 },
	{ SCMP_SYS(close), SC_ALLOW, 0 },
	/* PORT_CONNECT's connect timeout (datasock.c); the relay's drain. */
	{ SCMP_SYS(poll), SC_ALLOW, 0 },	/* unused: only for a connect that did not complete at once, a dead relay's report, or session_support's end (auth_session_end) */
	{ SCMP_SYS(ppoll), SC_ALLOW, 0 },	/* unused: poll() on arches without poll (aarch64) */
	/* Data sockets: PASV_LISTEN and PORT_CONNECT (isolate_network), a
	 * port-20 connect (connect_from_port_20), all TCP. */
	{ SCMP_SYS(socket), SC_SOCK_DATA, 0 },
	{ SCMP_SYS(setsockopt), SC_SOCKOPT, 0 },	/* SO_REUSEADDR */
	{ SCMP_SYS(bind), SC_ALLOW, 0 },
	{ SCMP_SYS(listen), SC_ALLOW, 0 },
	{ SCMP_SYS(connect), SC_ALLOW, 0 },
	{ SCMP_SYS(getsockname), SC_ALLOW, 0 },	/* unused: the PASV port the kernel chose, with no pasv range (pasv_min_port and pasv_max_port both 0, the default); in a range the port is the one bound */
	{ SCMP_SYS(getsockopt), SC_ALLOW, 0 },	/* unused: SO_ERROR of a PORT connect that did not complete at once */
	{ SCMP_SYS(getpid), SC_ALLOW, 0 },	/* seeds the PASV port choice (datasock.c) */
	/* Ending the session: SIGKILL to the workers and the relay, then
	 * their status (monitor_kill_child, monitor_drain_relay), and with
	 * session_support the PAM child's (auth_session_end). */
	{ SCMP_SYS(kill), SC_SIGKILL, 0 },
	{ SCMP_SYS(wait4), SC_ALLOW, 0 },
	{ SCMP_SYS(restart_syscall), SC_ALLOW, 0 },	/* unused: as in g_worker_base */
	{ SCMP_SYS(clock_nanosleep), SC_ALLOW, 0 },	/* unused: the relay drain's 5 ms naps (monitor_drain_relay), only while a TLS relay still writes its last replies */
	{ SCMP_SYS(nanosleep), SC_ALLOW, 0 },	/* unused: nanosleep() before glibc 2.31 and in other libcs; glibc's calls clock_nanosleep */
	/* A dead worker's forbidden syscall is named in the log
	 * (sandbox_syscall_name: libseccomp allocates the name). */
	{ SCMP_SYS(brk), SC_ALLOW, 0 },	/* unused: only when a worker was killed by seccomp (tests/unit/test_seccomp.c) */
	{ SCMP_SYS(mmap), SC_NOEXEC, 2 },	/* unused: as brk, when the heap cannot grow */
	{ SCMP_SYS(munmap), SC_ALLOW, 0 },	/* unused: as mmap */
	/* chown_uploads: the mode and owner of the new file whose
	 * descriptor the worker sent (monitor_handle_chown_upload); the
	 * root base it stacks on has them too. */
	{ SCMP_SYS(fstat), SC_ALLOW, 0 },	/* unused: fstat() before glibc 2.33; since, newfstatat */
	{ SCMP_SYS(newfstatat), SC_ALLOW, 0 },	/* unused: only with chown_uploads, in an anonymous session's upload */
	{ SCMP_SYS(fcntl), SC_FCNTL, 0 },	/* unused: F_GETFL, as newfstatat */
	{ SCMP_SYS(fchmod), SC_ALLOW, 0 },	/* unused: chown_upload_mode, as newfstatat */
	{ SCMP_SYS(fchown), SC_ALLOW, 0 },	/* unused: chown_username, as newfstatat */
	{ SCMP_SYS(exit_group), SC_ALLOW, 0 },
};

/*
 * The post-login worker and monitor give back the stack pages their
 * set-up dirtied (tw_stack_trim), so they are not private memory for the
 * session's life. After the sanitizer group, whose runtime needs madvise
 * unrestricted.
 */
static const struct sc_rule g_worker_trim[] = {
	{ SCMP_SYS(madvise), SC_MADV_DONTNEED, 0 },
};

/*
 * What libc (or a library) may try and do without. An errno instead of a
 * kill, so that a newer glibc does not take sessions down; ENOSYS makes
 * glibc take its older path.
 */
static const struct sc_rule g_probes[] = {
	/* glibc >= 2.35 registers restartable sequences per thread. */
	{ SCMP_SYS(rseq), SC_ERRNO, ENOSYS },
	/* glibc >= 2.34 tries clone3 first (posix_spawn, threads) and falls
	 * back to clone, whose flags a filter can read; clone3's are in
	 * memory where seccomp cannot look. */
	{ SCMP_SYS(clone3), SC_ERRNO, ENOSYS },
	/* 32-bit arches and some glibc paths try statx before fstatat. */
	{ SCMP_SYS(statx), SC_ERRNO, ENOSYS },
	/* Newer glibc prefers these and falls back on ENOSYS. */
	{ SCMP_SYS(faccessat2), SC_ERRNO, ENOSYS },
	{ SCMP_SYS(openat2), SC_ERRNO, ENOSYS },
	{ SCMP_SYS(epoll_pwait2), SC_ERRNO, ENOSYS },
	{ SCMP_SYS(close_range), SC_ERRNO, ENOSYS },	/* closefrom(); roles that fork allow it */
	/* A memory-release hint (malloc_trim, non-main arenas): without it
	 * the memory is simply kept. */
	{ SCMP_SYS(madvise), SC_ERRNO, ENOSYS },
	/* Used by some runtimes to order memory between threads; we have
	 * one thread. */
	{ SCMP_SYS(membarrier), SC_ERRNO, ENOSYS },
	/* sysconf(_SC_NPROCESSORS_*) and similar capacity probes. */
	{ SCMP_SYS(sched_getaffinity), SC_ERRNO, ENOSYS },
};

/*
 * Sanitizer builds (TW_SANITIZER_BUILD): what the ASan/UBSan runtime (gcc
 * 12's libsanitizer) does inside a sandboxed process, found by running
 * tests/unit/test_seccomp.c and deliberate ASan and UBSan errors under each
 * policy and removing one entry at a time. Never in a release build.
 */
static const struct sc_rule g_sanitizer[] = {
	/* Set up and torn down around every run of a handler and at exit. */
	{ SCMP_SYS(sigaltstack), SC_ALLOW, 0 },
	/* Error reports: the binary's path and its debug info (symbolising),
	 * /proc/self/maps. Read-only even with write_enable, and even before
	 * login: sanitizer builds do not prove the pre-login "no open" wall. */
	{ SCMP_SYS(open), SC_OPEN_RO, 1 },
	{ SCMP_SYS(openat), SC_OPEN_RO, 2 },
	{ SCMP_SYS(readlink), SC_ALLOW, 0 },	/* /proc/self/exe */
	{ SCMP_SYS(readlinkat), SC_ALLOW, 0 },
	/* clang's runtime would run llvm-symbolizer, which stays forbidden:
	 * with clang, set ASAN_OPTIONS=symbolize=0 (gcc's symbolises itself). */
	/* The allocator hands freed pages back; with the probe's ENOSYS it
	 * works but keeps them. */
	{ SCMP_SYS(madvise), SC_ALLOW, 0 },
};

struct sc_policy {
	const char *name;
	const struct sc_group groups[10];	/* in priority order */
};

#if TW_SANITIZER_BUILD
#define SC_SANITIZER SC_GROUP(g_sanitizer),
#else
#define SC_SANITIZER
#endif

/*
 * The policy of each role: which groups, in which order. The sanitizer
 * group goes just before the refusals it must override (no files, probe
 * errnos) and after the role's own open rule, which it must not narrow.
 */
static const struct sc_policy sc_policies[] = {
	[ROLE_LISTENER] = { "listener", {
		SC_GROUP(g_root_spawn),		/* forks the session pairs */
		SC_GROUP(g_root_base),
		SC_SANITIZER
		SC_GROUP(g_probes),
	} },
	[ROLE_MONITOR_PRELOGIN] = { "monitor-prelogin", {
		SC_GROUP(g_root_spawn),		/* forks the post-login worker */
		SC_GROUP(g_root_base),
		SC_SANITIZER
		SC_GROUP(g_probes),
	} },
	[ROLE_MONITOR_POSTLOGIN] = { "monitor-postlogin", {
		SC_GROUP(g_monitor_postlogin),
		SC_SANITIZER
		SC_GROUP(g_worker_trim),	/* the stack the login dirtied */
		SC_GROUP(g_probes),
	} },
	[ROLE_WORKER_PRELOGIN] = { "worker-prelogin", {
		SC_GROUP(g_worker_narrow),	/* to become a TLS relay */
		SC_GROUP(g_worker_base),
		SC_SANITIZER
		SC_GROUP(g_worker_no_files),
		SC_GROUP(g_worker_trim),	/* a TLS handshake's pages back */
		SC_GROUP(g_probes),
	} },
	[ROLE_WORKER_POSTLOGIN] = { "worker-postlogin", {
		SC_GROUP(g_worker_base),
		SC_GROUP(g_worker_files_read),
		SC_GROUP(g_worker_files_write),
		SC_GROUP(g_worker_splice),
		SC_GROUP(g_worker_net),
		SC_SANITIZER
		SC_GROUP(g_worker_trim),
		SC_GROUP(g_probes),
	} },
	[ROLE_WORKER_POSTLOGIN_ANON] = { "worker-postlogin-anon", {
		SC_GROUP(g_worker_base),
		SC_GROUP(g_worker_open_anon),
		SC_GROUP(g_worker_files_read),
		SC_GROUP(g_worker_files_write_anon),
		SC_GROUP(g_worker_splice),
		SC_GROUP(g_worker_net),
		SC_SANITIZER
		SC_GROUP(g_worker_trim),
		SC_GROUP(g_probes),
	} },
	/* The pre-login worker of a TLS session after the login; stacks
	 * on the pre-login filter, so it can only narrow it. */
	[ROLE_TLS_RELAY] = { "tls-relay", {
		SC_GROUP(g_relay),
		SC_SANITIZER
		SC_GROUP(g_worker_trim),	/* free() and the stack trim */
		SC_GROUP(g_probes),
	} },
};

#endif
