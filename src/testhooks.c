/*
 * Test-only: "SITE TWTEST <action> [arg]" makes the worker attempt a
 * forbidden action, so that end-to-end tests can prove each wall of the
 * sandbox against a live session. Compiled in only with -Dtest_hooks=true
 * (never in a release build); otherwise SITE TWTEST is an unknown SITE
 * command like any other.
 */
#include "tw_build.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/common/util.h"
#include "src/worker.h"

#if TW_TEST_HOOKS

/* The action's name, e.g. "socket_inet". */
#define TESTHOOK_ACTION_MAX 64
/*
 * The target of kill and ptrace when none is named: init, the process an
 * escaped worker would most like to reach.
 */
#define TESTHOOK_DEFAULT_PID 1

/* Traps our own SIGSYS handler caught: the report handler never returns. */
static volatile sig_atomic_t sigsys_caught;

static void
count_sigsys(int sig)
{
	(void)sig;
	sigsys_caught++;
}

/*
 * What a compromised worker would do to outlive the sandbox: catch SIGSYS
 * itself (sigaction), or block it, then make a forbidden call (the one
 * socket_unix makes). Returns how many traps its own handler caught: the
 * worker is still here to reply only if the sandbox could be survived.
 */
static long
survive_sigsys(int by_handler)
{
	struct sigaction sa;
	sigset_t set;

	sigsys_caught = 0;
	if (by_handler) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = count_sigsys;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSYS, &sa, NULL) == -1)
			return -1;
	} else {
		sigemptyset(&set);
		sigaddset(&set, SIGSYS);
		if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
			return -1;
	}
	/* Not closed: after a caught trap it returns no descriptor. */
	(void)socket(AF_UNIX, SOCK_STREAM, 0);
	return sigsys_caught;
}

static long
attempt(const char *action, const char *arg)
{
	char *const argv[] = { (char *)"/bin/true", NULL };
	long pid = arg[0] != '\0' ? strtol(arg, NULL, 10) : TESTHOOK_DEFAULT_PID;

	if (strcmp(action, "execve") == 0)
		return execve("/bin/true", argv, argv + 1);
	if (strcmp(action, "ptrace") == 0)
		return ptrace(PTRACE_ATTACH, (pid_t)pid, NULL, NULL);
	if (strcmp(action, "kill") == 0)
		return kill((pid_t)pid, SIGKILL);
	if (strcmp(action, "socket_inet") == 0)
		return socket(AF_INET, SOCK_STREAM, 0);
	if (strcmp(action, "socket_unix") == 0)
		return socket(AF_UNIX, SOCK_STREAM, 0);
	if (strcmp(action, "setuid0") == 0)
		return setuid(0);
	if (strcmp(action, "mount") == 0)
		return mount("none", "/", "tmpfs", 0, NULL);
	if (strcmp(action, "open_read") == 0)
		return open(arg, O_RDONLY);
	if (strcmp(action, "open_write") == 0)
		return open(arg, O_WRONLY | O_CREAT, 0644);
	if (strcmp(action, "unshare") == 0)
		return syscall(SYS_unshare, CLONE_NEWNET);
	/* Signal 0: only whether the call is let through. */
	if (strcmp(action, "tgkill_self") == 0)
		return syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), 0);
	if (strcmp(action, "tgkill") == 0)
		return syscall(SYS_tgkill, (pid_t)pid, (pid_t)pid, 0);
	if (strcmp(action, "sigsys_handler") == 0)
		return survive_sigsys(1);
	if (strcmp(action, "sigsys_block") == 0)
		return survive_sigsys(0);
	errno = EINVAL;
	return -2;
}

int
testhook_run(struct session *s, const char *arg)
{
	char action[TESTHOOK_ACTION_MAX];
	const char *sp = strchr(arg, ' ');
	size_t n = sp != NULL ? (size_t)(sp - arg) : strlen(arg);
	long rc;

	if (n == 0 || n >= sizeof(action)) {
		ctrl_reply(&s->ctrl, 501, "TWTEST needs an action.");
		return 1;
	}
	memcpy(action, arg, n);
	action[n] = '\0';
	errno = 0;
	rc = attempt(action, sp != NULL ? sp + 1 : "");
	/* Still alive: the sandbox refused with an errno (or allowed it). */
	ctrl_reply(&s->ctrl, 200, "TWTEST %s rc=%ld errno=%d", action, rc, errno);
	return 1;
}

#else

int
testhook_run(struct session *s, const char *arg)
{
	(void)s;
	(void)arg;
	return 0;
}

#endif
