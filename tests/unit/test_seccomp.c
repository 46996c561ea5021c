/*
 * The seccomp policies, each role in a child process: what the role must be
 * able to do still works, and each forbidden call kills the child with
 * SIGSYS after it reported the syscall number on its report socket (or
 * fails with the errno its policy names). Needs a kernel with seccomp;
 * runs as any user (the filters set no_new_privs themselves).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "src/common/config.h"
#include "privsep/ipc.h"
#include "sandbox/sandbox.h"
#include "tw_build.h"
#include "src/common/util.h"

static int report_sv[2] = { -1, -1 };
static int data_pipe[2] = { -1, -1 };
static int ipc_sv[2] = { -1, -1 };	/* stands in for the IPC channel */
static char tmpdir[64];
static pid_t parent_pid;	/* the test itself, a process not ours to touch */

/* --- Running one child under a policy -------------------------------- */

struct expect {
	int sig;		/* SIGSYS, or 0 for a normal exit */
	int nr;			/* syscall the report names, with SIGSYS */
	int code;		/* exit code otherwise */
};

/*
 * Reads the child's report, if any: the syscall number, or -1 none. The
 * report is the monitor's IPC_SANDBOX_VIOLATION, sent by the reporter the
 * session code registers (ipc_report_violations_to()).
 */
static int
read_report(enum sandbox_role role)
{
	struct ipc_msg m;
	uint32_t nr, got_role;
	struct pollfd p = { report_sv[0], POLLIN, 0 };

	if (poll(&p, 1, 0) != 1)
		return -1;
	/* The monitor's own receiver must accept what the handler sent. */
	CHECK_INT(ipc_recv(report_sv[0], &m), IPC_OK);
	CHECK_INT(m.type, IPC_SANDBOX_VIOLATION);
	CHECK_INT(ipc_get_u32(&m, &nr), 0);
	CHECK_INT(ipc_get_u32(&m, &got_role), 0);
	CHECK_INT(ipc_get_end(&m), 0);
	CHECK_INT(got_role, role);
	return nr == IPC_SYSCALL_UNKNOWN ? -2 : (int)nr;
}

/*
 * Roles whose policies run_case() applies before the case's own, ending
 * with ROLE_NONE, as a worker's filter stacks on the listener's and the
 * monitor's; NULL: none.
 */
#define ROLE_NONE ((enum sandbox_role)-1)
static const enum sandbox_role *stack_first;
/* anon_upload_enable, anon_mkdir_write_enable, anon_other_write_enable
 * of the next cases (bits 0 to 2). */
static unsigned case_anon;

static void
run_case(const char *what, enum sandbox_role role, int write_enable,
    int (*fn)(void), struct expect e)
{
	static struct tw_config cfg;
	const enum sandbox_role *first;
	int status, nr;
	pid_t pid;

	memset(&cfg, 0, sizeof(cfg));
	cfg.seccomp_sandbox = 1;
	cfg.write_enable = write_enable;
	cfg.anon_upload_enable = (case_anon & 1) != 0;
	cfg.anon_mkdir_write_enable = (case_anon & 2) != 0;
	cfg.anon_other_write_enable = (case_anon & 4) != 0;
	fflush(NULL);
	pid = fork();
	if (pid == -1) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		ipc_report_violations_to(report_sv[1]);
		for (first = stack_first; first != NULL && *first != ROLE_NONE; first++)
			sandbox_apply(*first, &cfg);
		sandbox_apply(role, &cfg);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		exit(2);
	}
	nr = read_report(role);
	if (e.sig != 0) {
		int ok = WIFSIGNALED(status) && WTERMSIG(status) == e.sig && nr == e.nr;

		if (!ok)
			fprintf(stderr, "%s (%s): status %#x, report nr %d (%s), "
			    "want signal %d, nr %d\n", what,
			    sandbox_role_name(role), status, nr,
			    sandbox_syscall_name(nr), e.sig, e.nr);
		CHECK(ok);
	} else {
		int ok = WIFEXITED(status) && WEXITSTATUS(status) == e.code && nr == -1;

		if (!ok)
			fprintf(stderr, "%s (%s): status %#x, report nr %d (%s), "
			    "want exit %d\n", what, sandbox_role_name(role),
			    status, nr, sandbox_syscall_name(nr), e.code);
		CHECK(ok);
	}
}

#define KILLED(n) ((struct expect){ SIGSYS, (n), 0 })
#define EXITS(c) ((struct expect){ 0, -1, (c) })

/* --- What every worker role must still be able to do ----------------- */

/* Both malloc paths: a large block (mmap) and a small one (brk). */
static int
malloc_basics(void)
{
	char *big = malloc(64 << 20);		/* past the mmap threshold */

	if (big == NULL)
		return 10;
	memset(big, 1, 64 << 20);
	free(big);
	big = malloc(100);		/* brk */
	if (big == NULL)
		return 11;
	free(big);
	return 0;
}

/* What src/relay.c and OpenSSL's records do: no more. */
static int
relay_basics(void)
{
	struct pollfd pfd = { ipc_sv[0], POLLIN, 0 };
	struct timespec ts;
	unsigned char rnd[16];
	char c;
	int rc = malloc_basics();

	if (rc != 0)
		return rc;
	if (write(data_pipe[1], "x", 1) != 1 || read(data_pipe[0], &c, 1) != 1 || c != 'x')
		return 12;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 13;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return 17;
	if (send(ipc_sv[1], "y", 1, MSG_NOSIGNAL) != 1 || poll(&pfd, 1, 1000) != 1 ||
	    recv(ipc_sv[0], &c, 1, 0) != 1 || c != 'y')
		return 18;
	if (raise(SIGURG) != 0)		/* tgkill to ourselves; SIGURG is ignored */
		return 24;
	return 0;
}

/* The relay adds nothing to its old filter: a fcntl the pre-login allowed. */
static int
relay_no_fcntl(void)
{
	(void)fcntl(ipc_sv[0], F_GETFL);
	return 0;
}

static int
worker_basics(void)
{
	struct pollfd pfd;
	struct timespec ts;
	unsigned char rnd[16];
	char c;
	struct stat st;
	int fl, rc = malloc_basics();

	if (rc != 0)
		return rc;
	if (write(data_pipe[1], "x", 1) != 1)
		return 12;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0 ||
	    clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 13;
	pfd.fd = data_pipe[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 1000) != 1)
		return 14;
	if (read(data_pipe[0], &c, 1) != 1 || c != 'x')
		return 15;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return 17;
	/* The IPC channel: send, a peeking recv, fd flags, socket options. */
	if (send(ipc_sv[1], "y", 1, MSG_NOSIGNAL) != 1)
		return 18;
	if (recv(ipc_sv[0], &c, 1, MSG_PEEK) != 1 || read(ipc_sv[0], &c, 1) != 1 ||
	    c != 'y')
		return 19;
	fl = fcntl(ipc_sv[0], F_GETFL);
	if (fl == -1 || fcntl(ipc_sv[0], F_SETFL, fl | O_NONBLOCK) == -1)
		return 20;
	fl = 1;
	if (setsockopt(ipc_sv[0], SOL_SOCKET, SO_OOBINLINE, &fl, sizeof(fl)) != 0)
		return 26;
	if (fstat(data_pipe[0], &st) != 0)
		return 21;
	if (isatty(data_pipe[0]))	/* TCGETS: ENOTTY, not a kill */
		return 22;
	if (ioctl(ipc_sv[0], FIONREAD, &fl) != 0)	/* the ABOR watch */
		return 27;
	if (getpid() <= 0)
		return 23;
	if (raise(SIGURG) != 0)		/* tgkill to ourselves; SIGURG is ignored */
		return 24;
	/* glibc probes get an errno, not a kill. */
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 25;
	return 0;
}

#if !TW_SANITIZER_BUILD
static int
prelogin_open_refused(void)
{
	if (open("/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
		return 1;
	if (openat(AT_FDCWD, "/etc/passwd", O_RDONLY) != -1 || errno != EACCES)
		return 2;
	return 0;
}
#endif

static int
postlogin_reads(void)
{
	char path[128], buf[16];
	int fd, s, c, a;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	off_t off = 0;

	snprintf(path, sizeof(path), "%s/file", tmpdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1 || read(fd, buf, sizeof(buf)) != 5 || lseek(fd, 0, SEEK_SET) != 0)
		return 1;
	if (sendfile(data_pipe[1], fd, &off, 5) != 5 || read(data_pipe[0], buf, 5) != 5)
		return 2;
	close(fd);
	if (chdir(tmpdir) != 0 || getcwd(path, sizeof(path)) == NULL)
		return 3;
	fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || syscall(SYS_getdents64, fd, path, sizeof(path)) <= 0)
		return 4;
	close(fd);
	/* A PASV-style listener and a PORT-style connect to it. */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s == -1)
		return 5;
	c = 1;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &c, sizeof(c)) != 0)
		return 6;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(s, 1) != 0 ||
	    getsockname(s, (struct sockaddr *)&sin, &len) != 0)
		return 7;
	c = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (c == -1 || connect(c, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		return 8;
	a = accept4(s, NULL, NULL, SOCK_CLOEXEC);
	if (a == -1 || write(c, "hi", 2) != 2 || read(a, buf, 2) != 2)
		return 9;
	if (shutdown(a, SHUT_RDWR) != 0)
		return 10;
	return 0;
}

static int
postlogin_writes(void)
{
	char path[128], path2[128];
	int fd;

	snprintf(path, sizeof(path), "%s/up", tmpdir);
	snprintf(path2, sizeof(path2), "%s/up2", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd == -1 || write(fd, "data", 4) != 4 || ftruncate(fd, 2) != 0)
		return 1;
	close(fd);
	if (rename(path, path2) != 0 || unlink(path2) != 0)
		return 2;
	if (mkdir(path, 0700) != 0 || rmdir(path) != 0)
		return 3;
	return 0;
}

/* --- Forbidden calls: each one runs in its own child ------------------ */

static int
do_execve(void)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };

	execve("/bin/true", argv, envp);
	return 99;
}

static int do_ptrace(void) { ptrace(PTRACE_TRACEME, 0, NULL, NULL); return 99; }
/* An ioctl no code of ours makes (the ABOR watch needs FIONREAD only). */
static int do_fionbio(void) { int on = 1; ioctl(ipc_sv[0], FIONBIO, &on); return 99; }
static int do_setuid(void) { (void)!setuid(0); return 99; }
static int do_mount(void) { mount("none", "/mnt", "tmpfs", 0, NULL); return 99; }
static int do_inet(void) { socket(AF_INET, SOCK_STREAM, 0); return 99; }
static int do_udp(void) { socket(AF_INET, SOCK_DGRAM, 0); return 99; }
static int do_unix(void) { socket(AF_UNIX, SOCK_STREAM, 0); return 99; }
static int do_kill(void) { kill(parent_pid, 0); return 99; }
static int do_tgkill(void) { syscall(SYS_tgkill, parent_pid, parent_pid, 0); return 99; }
static int do_fork(void) { fork(); return 99; }
static int do_getpgid(void) { getpgid(0); return 99; }
static int do_unshare_user(void) { unshare(CLONE_NEWUSER); return 99; }
static int do_chroot(void) { (void)!chroot("/"); return 99; }

static int
do_mmap_exec(void)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return 99;
}

static int
do_mprotect_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 98;
	mprotect(p, 4096, PROT_READ | PROT_EXEC);
	return 99;
}

static int
do_open_write(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/file", tmpdir);
	openat(AT_FDCWD, path, O_WRONLY);
	return 99;
}

static int
do_open_creat(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/new", tmpdir);
	openat(AT_FDCWD, path, O_RDONLY | O_CREAT, 0600);
	return 99;
}

static int
do_unlinkat(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/file", tmpdir);
	unlinkat(AT_FDCWD, path, 0);
	return 99;
}

static int do_setrlimit(void)
{
	struct rlimit rl = { 1, 1 };

	setrlimit(RLIMIT_CORE, &rl);
	return 99;
}

static int
do_fcntl_setown(void)
{
	fcntl(ipc_sv[0], F_SETOWN, parent_pid);
	return 99;
}

static int
do_futex_requeue(void)
{
	static uint32_t f1, f2;

	syscall(SYS_futex, &f1, FUTEX_CMP_REQUEUE, 1, (void *)1, &f2, 0);
	return 99;
}

static int
do_sockopt(void)
{
	int one = 1;

	setsockopt(report_sv[1], SOL_SOCKET, SO_DEBUG, &one, sizeof(one));
	return 99;
}

/*
 * Outliving a trap: a process that catches SIGSYS itself would carry on
 * after every forbidden call. Installing (or ignoring) a SIGSYS handler is
 * killed outright, so nothing after the sigaction() runs and no report is
 * sent (the report handler never runs either).
 */
static volatile sig_atomic_t sigsys_caught;

/* rt_sigaction's last argument: the kernel's sigset_t, _NSIG (64) bits. */
#define KERNEL_SIGSET_SIZE 8

static void
count_sigsys(int sig)
{
	(void)sig;
	sigsys_caught++;
}

/* Makes count_sigsys the handler of sig; sigaction()'s result. */
static int
count_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_sigsys;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static int
do_own_sigsys_handler(void)
{
	return count_signal(SIGSYS) != 0 ? 98 : 99;
}

/* The same, then a forbidden call: the handler must never get to run. */
static int
do_own_sigsys_handler_then_trap(void)
{
	(void)count_signal(SIGSYS);
	(void)getpgid(0);
	return sigsys_caught ? 97 : 99;
}

static int
do_ignore_sigsys(void)
{
	(void)signal(SIGSYS, SIG_IGN);	/* rt_sigaction too */
	return 99;
}

/*
 * The kernel reads rt_sigaction's signal as an int: set bits above 31
 * still name SIGSYS, so the filter must look at the low 32 bits only.
 * A kernel struct sigaction starts with the handler; SIG_IGN needs no
 * restorer.
 */
static int
do_ignore_sigsys_high_bits(void)
{
	unsigned long ksa[4] = { (unsigned long)SIG_IGN, 0, 0, 0 };
	long r = syscall(SYS_rt_sigaction, (1UL << 32) | SIGSYS, ksa, NULL,
	    KERNEL_SIGSET_SIZE);

	return r == 0 ? 99 : 98;	/* 98: the kernel did not take it as SIGSYS */
}

/*
 * Blocking SIGSYS instead: the kernel delivers a trap's SIGSYS anyway,
 * with the default action (so without our report). Proven here rather
 * than trusted.
 */
static int
do_block_sigsys_then_trap(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGSYS);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return 98;
	(void)getpgid(0);
	return 99;
}

/* What stays allowed: every other signal's handler. */
static int
other_handlers(void)
{
	if (count_signal(SIGALRM) != 0 || count_signal(SIGURG) != 0 ||
	    count_signal(SIGRTMIN) != 0 || count_signal(SIGRTMAX) != 0)
		return 1;
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || signal(SIGCHLD, SIG_DFL) == SIG_ERR)
		return 2;
	if (raise(SIGURG) != 0 || sigsys_caught != 1)
		return 4;
	return 0;
}

/* --- Root roles ------------------------------------------------------- */

/*
 * What the monitor does after login (privsep/monitor.c), and no more:
 * IPC, a log record, PASV and PORT data sockets, ending its children,
 * the stack trim, a name lookup's allocation.
 */
static int
monitor_postlogin_basics(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct iovec iov;
	struct msghdr msg;
	struct pollfd pfd;
	char c = 'y', *page;
	int s, t, err, status, rc = malloc_basics();

	if (rc != 0)
		return rc;
	if (send(ipc_sv[1], &c, 1, MSG_NOSIGNAL) != 1)
		return 12;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &c;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	pfd.fd = ipc_sv[0];
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 1000) != 1 || recvmsg(ipc_sv[0], &msg, 0) != 1 || c != 'y')
		return 13;
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	t = 1;
	if (s == -1 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &t, sizeof(t)) != 0)
		return 14;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(s, 1) != 0 ||
	    getsockname(s, (struct sockaddr *)&sin, &len) != 0)
		return 15;
	t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (t == -1 || (connect(t, (struct sockaddr *)&sin, sizeof(sin)) != 0 &&
			errno != EINPROGRESS))
		return 16;
	pfd.fd = t;
	pfd.events = POLLOUT;
	len = sizeof(err);
	if (poll(&pfd, 1, 1000) != 1 || getsockopt(t, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
	    err != 0)
		return 17;
	close(t);
	close(s);
	if (getpid() <= 0)
		return 18;
	/* SIGKILL to a child that is gone: refused by the kernel, not the filter. */
	if (kill(INT32_MAX, SIGKILL) != -1 || errno != ESRCH)
		return 19;
	if (waitpid(-1, &status, WNOHANG) != -1 || errno != ECHILD)
		return 20;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || madvise(page, 4096, MADV_DONTNEED) != 0)
		return 21;
	return 0;
}

/* name under the test's directory, in a buffer of the caller's. */
static const char *
tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
	return buf;
}

static int do_mkdir(void) { char p[128]; mkdir(tmp_path(p, sizeof(p), "newdir"), 0700); return 99; }
static int do_chmod(void) { char p[128]; chmod(tmp_path(p, sizeof(p), "file"), 0600); return 99; }

static int do_kill_term(void) { kill(INT32_MAX, SIGTERM); return 99; }

/* After QUIT's reply a session's worker lowers itself (tw_sched_idle). */
static int
do_sched_idle(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	return sched_setscheduler(0, SCHED_IDLE, &sp) == 0 ? 0 : 1;
}

static int
do_sched_batch(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)sched_setscheduler(0, SCHED_BATCH, &sp);
	return 99;
}

static int
do_sched_idle_other(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)sched_setscheduler(parent_pid, SCHED_IDLE, &sp);
	return 99;
}

static void
test_sched_idle(void)
{
	static const enum sandbox_role lowering[] = {
		ROLE_WORKER_PRELOGIN, ROLE_WORKER_POSTLOGIN,
	};
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(lowering); i++) {
		run_case("SCHED_IDLE", lowering[i], 0, do_sched_idle, EXITS(0));
		run_case("SCHED_BATCH", lowering[i], 0, do_sched_batch,
		    KILLED(SCMP_SYS(sched_setscheduler)));
		run_case("SCHED_IDLE for another", lowering[i], 0, do_sched_idle_other,
		    KILLED(SCMP_SYS(sched_setscheduler)));
	}
	/* The monitor exits at its own priority: the client's end of file
	 * and the listener's count of the session go together. */
	run_case("SCHED_IDLE", ROLE_MONITOR_POSTLOGIN, 0, do_sched_idle,
	    KILLED(SCMP_SYS(sched_setscheduler)));
	run_case("SCHED_IDLE", ROLE_TLS_RELAY, 0, do_sched_idle,
	    KILLED(SCMP_SYS(sched_setscheduler)));
}

#if !TW_SANITIZER_BUILD
static int
do_open_read(void)
{
	open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	return 99;
}
#endif

static int
root_basics(void)
{
	int status, fd;
	pid_t pid;

	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return 1;
	close(fd);
	pid = fork();
	if (pid == -1)
		return 2;
	if (pid == 0)
		_exit(7);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return 3;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return 4;
	close(fd);
	/* Forked session processes close what they inherited in one call. */
	fd = dup(2);
	if (fd == -1 || close_range((unsigned)fd, ~0U, 0) != 0 || fcntl(fd, F_GETFD) != -1)
		return 6;
	if (worker_basics())
		return 5;
	/* The PAM child gives its hashing the CPU time nobody else wants. */
	{
		struct sched_param sp = { .sched_priority = 0 };

		if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0)
			return 7;
	}
	return 0;
}

static int
unsandboxed_probe(void)
{
	return getpgid(0) >= 0 && getppid() > 0 ? 0 : 1;
}

/* --- The cases -------------------------------------------------------- */

static void
test_names(void)
{
	CHECK_STR(sandbox_role_name(ROLE_WORKER_PRELOGIN), "worker-prelogin");
	CHECK_STR(sandbox_role_name(ROLE_WORKER_POSTLOGIN), "worker-postlogin");
	CHECK_STR(sandbox_role_name(ROLE_LISTENER), "listener");
	CHECK_STR(sandbox_role_name((enum sandbox_role)99), "unknown");
	CHECK_STR(sandbox_syscall_name(SCMP_SYS(execve)), "execve");
	CHECK_STR(sandbox_syscall_name(SCMP_SYS(openat)), "openat");
	CHECK_STR(sandbox_syscall_name(-1), "unknown");
	CHECK_STR(sandbox_syscall_name(99999), "unknown");
}

/* No process outlives a trap by catching, ignoring or blocking SIGSYS. */
static void
test_sigsys_guard(enum sandbox_role r)
{
	run_case("other handlers", r, 0, other_handlers, EXITS(0));
	run_case("own SIGSYS handler", r, 0, do_own_sigsys_handler, KILLED(-1));
	run_case("own SIGSYS handler, then a trap", r, 0,
	    do_own_sigsys_handler_then_trap, KILLED(-1));
	run_case("SIGSYS ignored", r, 0, do_ignore_sigsys, KILLED(-1));
	run_case("SIGSYS ignored, high bits", r, 0, do_ignore_sigsys_high_bits,
	    KILLED(-1));
	run_case("SIGSYS blocked, then a trap", r, 0, do_block_sigsys_then_trap,
	    KILLED(-1));
}

/*
 * The report handler is installed before the first filter and inherited:
 * a process under its parent's filter, which no longer lets anyone set a
 * SIGSYS handler, still applies its own policy and reports its traps.
 */
static void
test_stacked(void)
{
	static const enum sandbox_role listener_monitor[] = {
		ROLE_LISTENER, ROLE_MONITOR_PRELOGIN, ROLE_NONE,
	};
	static const enum sandbox_role listener_monitor_worker[] = {
		ROLE_LISTENER, ROLE_MONITOR_PRELOGIN, ROLE_WORKER_PRELOGIN, ROLE_NONE,
	};

	stack_first = listener_monitor;
	run_case("stacked basics", ROLE_WORKER_PRELOGIN, 0, worker_basics, EXITS(0));
	run_case("stacked basics", ROLE_WORKER_POSTLOGIN, 0, worker_basics, EXITS(0));
	run_case("stacked basics", ROLE_MONITOR_POSTLOGIN, 0, monitor_postlogin_basics,
	    EXITS(0));
	stack_first = listener_monitor_worker;
	/* The pre-login worker of a TLS session narrows its own filter. */
	run_case("stacked relay basics", ROLE_TLS_RELAY, 0, relay_basics, EXITS(0));
	run_case("stacked relay fcntl", ROLE_TLS_RELAY, 0, relay_no_fcntl,
	    KILLED(SCMP_SYS(fcntl)));
	stack_first = listener_monitor;
	run_case("stacked execve", ROLE_WORKER_POSTLOGIN, 0, do_execve,
	    KILLED(SCMP_SYS(execve)));
	run_case("stacked own SIGSYS handler", ROLE_WORKER_POSTLOGIN, 0,
	    do_own_sigsys_handler, KILLED(-1));
	stack_first = NULL;
}

static void
test_workers(void)
{
	static const enum sandbox_role workers[] = {
		ROLE_WORKER_PRELOGIN, ROLE_WORKER_POSTLOGIN, ROLE_TLS_RELAY,
	};
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(workers); i++) {
		enum sandbox_role r = workers[i];

		run_case("basics", r, 0, r == ROLE_TLS_RELAY ? relay_basics : worker_basics,
		    EXITS(0));
		run_case("execve", r, 0, do_execve, KILLED(SCMP_SYS(execve)));
		run_case("ptrace", r, 0, do_ptrace, KILLED(SCMP_SYS(ptrace)));
		run_case("ioctl FIONBIO", r, 0, do_fionbio, KILLED(SCMP_SYS(ioctl)));
		run_case("setuid", r, 0, do_setuid, KILLED(SCMP_SYS(setuid)));
		run_case("mount", r, 0, do_mount, KILLED(SCMP_SYS(mount)));
		run_case("chroot", r, 0, do_chroot, KILLED(SCMP_SYS(chroot)));
		run_case("mmap exec", r, 0, do_mmap_exec, KILLED(SCMP_SYS(mmap)));
		run_case("mprotect exec", r, 0, do_mprotect_exec, KILLED(SCMP_SYS(mprotect)));
		run_case("udp socket", r, 0, do_udp, KILLED(SCMP_SYS(socket)));
		run_case("unix socket", r, 0, do_unix, KILLED(SCMP_SYS(socket)));
		run_case("kill", r, 0, do_kill, KILLED(SCMP_SYS(kill)));
		run_case("tgkill other", r, 0, do_tgkill, KILLED(SCMP_SYS(tgkill)));
		run_case("fork", r, 0, do_fork, KILLED(SCMP_SYS(clone)));
		run_case("setrlimit", r, 0, do_setrlimit, KILLED(SCMP_SYS(prlimit64)));
		run_case("F_SETOWN", r, 0, do_fcntl_setown, KILLED(SCMP_SYS(fcntl)));
		run_case("futex requeue", r, 0, do_futex_requeue, KILLED(SCMP_SYS(futex)));
		run_case("SO_DEBUG", r, 0, do_sockopt, KILLED(SCMP_SYS(setsockopt)));
		run_case("getpgid", r, 0, do_getpgid, KILLED(SCMP_SYS(getpgid)));
		run_case("unshare", r, 0, do_unshare_user, KILLED(SCMP_SYS(unshare)));
		test_sigsys_guard(r);
	}

	/* Before login (and as TLS relay): no files, no sockets at all. */
#if TW_SANITIZER_BUILD
	/* The sanitizer runtime reads files to symbolise its reports; only
	 * the write side of the wall stands in these builds. */
	run_case("open for writing", ROLE_WORKER_PRELOGIN, 1, do_open_write,
	    KILLED(SCMP_SYS(openat)));
	run_case("open for writing", ROLE_TLS_RELAY, 1, do_open_write,
	    KILLED(SCMP_SYS(openat)));
#else
	/* The relay opens nothing, not even to be refused. */
	run_case("open", ROLE_TLS_RELAY, 0, prelogin_open_refused, KILLED(SCMP_SYS(openat)));
	run_case("open", ROLE_WORKER_PRELOGIN, 0, prelogin_open_refused, EXITS(0));
	run_case("open", ROLE_WORKER_PRELOGIN, 1, prelogin_open_refused, EXITS(0));
	run_case("reads", ROLE_WORKER_PRELOGIN, 0, postlogin_reads, EXITS(1));
#endif
	run_case("inet socket", ROLE_WORKER_PRELOGIN, 0, do_inet, KILLED(SCMP_SYS(socket)));
	run_case("inet socket", ROLE_TLS_RELAY, 0, do_inet, KILLED(SCMP_SYS(socket)));
	run_case("unlinkat (write_enable)", ROLE_WORKER_PRELOGIN, 1, do_unlinkat,
	    KILLED(SCMP_SYS(unlinkat)));

	/* After login: reads and TCP data sockets; writes with write_enable. */
	run_case("reads", ROLE_WORKER_POSTLOGIN, 0, postlogin_reads, EXITS(0));
	run_case("writes", ROLE_WORKER_POSTLOGIN, 1, postlogin_writes, EXITS(0));
	run_case("reads (write_enable)", ROLE_WORKER_POSTLOGIN, 1, postlogin_reads, EXITS(0));
	run_case("open for writing", ROLE_WORKER_POSTLOGIN, 0, do_open_write,
	    KILLED(SCMP_SYS(openat)));
	run_case("open O_CREAT", ROLE_WORKER_POSTLOGIN, 0, do_open_creat,
	    KILLED(SCMP_SYS(openat)));
	run_case("unlinkat", ROLE_WORKER_POSTLOGIN, 0, do_unlinkat,
	    KILLED(SCMP_SYS(unlinkat)));
	run_case("mmap exec (write_enable)", ROLE_WORKER_POSTLOGIN, 1, do_mmap_exec,
	    KILLED(SCMP_SYS(mmap)));
	run_case("setuid (write_enable)", ROLE_WORKER_POSTLOGIN, 1, do_setuid,
	    KILLED(SCMP_SYS(setuid)));
}

/*
 * An anonymous session's worker: reads like a local one; each write only
 * with its anon_* switch (and write_enable); never SITE CHMOD.
 */
static void
test_anonymous_worker(void)
{
	enum sandbox_role r = ROLE_WORKER_POSTLOGIN_ANON;

	run_case("anon basics", r, 1, worker_basics, EXITS(0));
	run_case("anon reads", r, 1, postlogin_reads, EXITS(0));
	run_case("anon open for writing", r, 1, do_open_write, KILLED(SCMP_SYS(openat)));
	run_case("anon open O_CREAT", r, 1, do_open_creat, KILLED(SCMP_SYS(openat)));
	run_case("anon mkdir", r, 1, do_mkdir, KILLED(SCMP_SYS(mkdir)));
	run_case("anon unlinkat", r, 1, do_unlinkat, KILLED(SCMP_SYS(unlinkat)));
	run_case("anon chmod", r, 1, do_chmod, KILLED(SCMP_SYS(chmod)));
	case_anon = 1;		/* anon_upload_enable */
	run_case("anon upload: O_CREAT", r, 1, do_open_creat, EXITS(99));
	run_case("anon upload: mkdir", r, 1, do_mkdir, KILLED(SCMP_SYS(mkdir)));
	run_case("anon upload: unlinkat", r, 1, do_unlinkat, KILLED(SCMP_SYS(unlinkat)));
	run_case("anon upload, no write_enable: O_CREAT", r, 0, do_open_creat,
	    KILLED(SCMP_SYS(openat)));
	case_anon = 2;		/* anon_mkdir_write_enable */
	run_case("anon mkdir: mkdir", r, 1, do_mkdir, EXITS(99));
	run_case("anon mkdir: O_CREAT", r, 1, do_open_creat, KILLED(SCMP_SYS(openat)));
	case_anon = 7;		/* all three */
	run_case("anon all: writes", r, 1, postlogin_writes, EXITS(0));
	run_case("anon all: chmod", r, 1, do_chmod, KILLED(SCMP_SYS(chmod)));
	case_anon = 0;
	/* A local user with write_enable may chmod. */
	run_case("local chmod", ROLE_WORKER_POSTLOGIN, 1, do_chmod, EXITS(99));
}

static void
test_root_roles(void)
{
	static const enum sandbox_role roles[] = {
		ROLE_LISTENER, ROLE_MONITOR_PRELOGIN, ROLE_MONITOR_POSTLOGIN,
	};
	enum sandbox_role r;
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(roles); i++) {
		r = roles[i];

		if (r != ROLE_MONITOR_POSTLOGIN) {
			run_case("basics", r, 0, root_basics, EXITS(0));
			test_sigsys_guard(r);
		} else {
			run_case("basics", r, 0, monitor_postlogin_basics, EXITS(0));
		}
		run_case("execve", r, 0, do_execve, KILLED(SCMP_SYS(execve)));
		run_case("ptrace", r, 0, do_ptrace, KILLED(SCMP_SYS(ptrace)));
		run_case("mount", r, 0, do_mount, KILLED(SCMP_SYS(mount)));
		run_case("unshare user", r, 0, do_unshare_user, KILLED(SCMP_SYS(unshare)));
	}
	/*
	 * After login the monitor no longer forks, changes credentials,
	 * opens files, makes other sockets than TCP, sends other signals
	 * than SIGKILL or sets a handler of any kind (so none for SIGSYS).
	 */
	r = ROLE_MONITOR_POSTLOGIN;
	run_case("fork", r, 0, do_fork, KILLED(SCMP_SYS(clone)));
	run_case("setuid", r, 0, do_setuid, KILLED(SCMP_SYS(setuid)));
#if !TW_SANITIZER_BUILD
	/* (The sanitizer runtime may read files: see test_workers.) */
	run_case("open", r, 0, do_open_read, KILLED(SCMP_SYS(openat)));
#endif
	run_case("unix socket", r, 0, do_unix, KILLED(SCMP_SYS(socket)));
	run_case("udp socket", r, 0, do_udp, KILLED(SCMP_SYS(socket)));
	run_case("SIGTERM", r, 0, do_kill_term, KILLED(SCMP_SYS(kill)));
	run_case("mmap exec", r, 0, do_mmap_exec, KILLED(SCMP_SYS(mmap)));
	run_case("own SIGSYS handler", r, 0, do_own_sigsys_handler,
	    KILLED(SCMP_SYS(rt_sigaction)));
	run_case("other handlers", r, 0, other_handlers, KILLED(SCMP_SYS(rt_sigaction)));
}

/*
 * fn in a child under the pre-login worker's policy with the switches of
 * cfg and log_only: it must exit with want, and nothing is reported.
 */
static void
run_switched(const struct tw_config *cfg, int log_only, int (*fn)(void), int want)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		sandbox_log_only = log_only;
		sandbox_apply(ROLE_WORKER_PRELOGIN, cfg);
		_exit(fn());
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == want);
	CHECK(recv(report_sv[0], &status, sizeof(status), MSG_DONTWAIT) == -1);
}

static void
test_switches(void)
{
	static struct tw_config cfg;

	/* seccomp_sandbox=NO: no filter at all. */
	memset(&cfg, 0, sizeof(cfg));
	run_switched(&cfg, 0, unsandboxed_probe, 0);

	/* Log-only: the kernel logs and the call runs. */
	cfg.seccomp_sandbox = 1;
	run_switched(&cfg, 1, unsandboxed_probe, 0);
	/* Log-only kills nothing: not even a SIGSYS handler of one's own
	 * (there is no trap for it to catch), nor a call after it. */
	run_switched(&cfg, 1, do_own_sigsys_handler_then_trap, 99);
}

static void
setup(void)
{
	char path[128];
	int fd;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report_sv) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ipc_sv) != 0 ||
	    pipe2(data_pipe, O_CLOEXEC) != 0) {
		perror("setup");
		exit(2);
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tw-seccomp-XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd == -1 || write(fd, "hello", 5) != 5) {
		perror(path);
		exit(2);
	}
	close(fd);
	/* SIGURG's default is to ignore; the children raise it. */
	signal(SIGURG, SIG_DFL);
}

static void
cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/file", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

int
main(void)
{
	parent_pid = getpid();
	setup();
	test_names();
	test_workers();
	test_sched_idle();
	test_anonymous_worker();
	test_root_roles();
	test_stacked();
	test_switches();
	cleanup();
	return check_summary();
}
