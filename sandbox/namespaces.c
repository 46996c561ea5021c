/*
 * Namespaces for protocol workers. isolate_network: one empty network
 * namespace made at start and shared by every worker (setns is cheap; a
 * namespace per session is not, and the kernel tears them down slowly).
 * isolate: each worker is forked into its own PID and IPC namespaces.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/util.h"

int
ns_create_empty_net(char *why, size_t whylen)
{
	int p[2], fd = -1, status;
	char path[64], ok = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0) {
		tw_snprintf(why, whylen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		tw_snprintf(why, whylen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* The child holds the new namespace until the parent has it. */
		char r = unshare(CLONE_NEWNET) == 0 ? 1 : 0;
		char e = (char)errno;

		(void)!write(p[1], &r, 1);
		if (!r)
			(void)!write(p[1], &e, 1);
		if (r)
			pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &ok, 1) == 1 && ok) {
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			tw_snprintf(why, whylen, "open %s: %s", path, strerror(errno));
	} else {
		char e = 0;

		(void)!read(p[0], &e, 1);
		tw_snprintf(why, whylen, "unshare(CLONE_NEWNET): %s", strerror(e));
	}
	close(p[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return fd;
}

pid_t
ns_fork(int isolate)
{
	/*
	 * fork() semantics, from the raw system call: the process is single
	 * threaded (no lock can be held by another thread), and glibc's
	 * fork() would reset its loader and stdio locks and its fork
	 * generation in the child, writes that make pages of ld.so and libc
	 * private memory of every session process (8 to 12 KB each). With
	 * isolate, two more flags: the child is PID 1 of a new PID namespace
	 * and has its own System V IPC.
	 */
	return (pid_t)syscall(SYS_clone, (isolate ? CLONE_NEWPID | CLONE_NEWIPC : 0) | SIGCHLD,
			      NULL, NULL, NULL, NULL);
}

int
ns_probe_isolate(char *why, size_t whylen)
{
	int status;
	pid_t pid = ns_fork(1);

	if (pid < 0) {
		tw_snprintf(why, whylen, "clone(CLONE_NEWPID|CLONE_NEWIPC): %s", strerror(errno));
		return 0;
	}
	if (pid == 0)
		_exit(getpid() == 1 ? 0 : 1);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tw_snprintf(why, whylen, "the child was not PID 1 of its namespace");
		return 0;
	}
	return 1;
}

void
ns_join_net(int netns_fd)
{
	if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0)
		die("setns into the workers' network namespace: %s", strerror(errno));
}
