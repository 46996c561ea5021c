/*
 * The one place that changes credentials. Every session process that
 * stops being root passes through creds_become(), in this order:
 * supplementary groups, chroot, capability bounding set, gid, uid,
 * remaining capability sets, no_new_privs, dumpable, rlimits, and finally
 * a check that root cannot come back.
 */
#include "sandbox.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* A worker needs a control socket, an IPC socket, a data socket, a
 * passive listener, a file and a directory, plus slack for libc. */
#define WORKER_MAX_FILES 32

static void
drop_bounding_set(void)
{
	cap_value_t c;

	for (c = 0; c <= CAP_LAST_CAP; c++) {
		if (cap_drop_bound(c) != 0 && errno != EINVAL)
			die("cannot drop capability %d from the bounding set: %s",
			    (int)c, strerror(errno));
	}
}

static void
clear_capabilities(void)
{
	cap_t empty = cap_init();

	if (empty == NULL || cap_set_proc(empty) != 0)
		die("cannot clear capabilities: %s", strerror(errno));
	cap_free(empty);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		die("cannot clear ambient capabilities: %s", strerror(errno));
}

static void
set_limit(int resource, rlim_t value)
{
	struct rlimit rl = { value, value };

	if (setrlimit(resource, &rl) != 0)
		die("setrlimit(%d): %s", resource, strerror(errno));
}

void
creds_become(const struct creds_target *t)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;

	if (t->uid == 0 || t->gid == 0)
		bug("creds_become to uid %u gid %u", (unsigned)t->uid, (unsigned)t->gid);
	if (setgroups((size_t)t->ngroups, t->ngroups > 0 ? t->groups : NULL) != 0)
		die("setgroups: %s", strerror(errno));
	if (t->chroot_dir != NULL) {
		if (chdir(t->chroot_dir) != 0 || chroot(".") != 0 || chdir("/") != 0)
			die("chroot to %s: %s", t->chroot_dir, strerror(errno));
	}
	/* Needs CAP_SETPCAP, so it must happen while still root. */
	drop_bounding_set();
	if (setresgid(t->gid, t->gid, t->gid) != 0)
		die("setresgid(%u): %s", (unsigned)t->gid, strerror(errno));
	if (setresuid(t->uid, t->uid, t->uid) != 0)
		die("setresuid(%u): %s", (unsigned)t->uid, strerror(errno));
	clear_capabilities();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	/*
	 * Not dumpable: /proc/PID of this process belongs to root, so another
	 * process of the same uid (another session's worker) cannot ptrace it
	 * or read its memory, and no core file leaks a password.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die("PR_SET_DUMPABLE: %s", strerror(errno));
	set_limit(RLIMIT_NPROC, 0);
	set_limit(RLIMIT_NOFILE, WORKER_MAX_FILES);
	set_limit(RLIMIT_CORE, 0);
	umask(t->umask);
	if (t->start_dir != NULL && chdir(t->start_dir) != 0)
		die("cannot change to directory %s: %s", t->start_dir, strerror(errno));

	/* Final checks: every id is the target and root is gone for good. */
	if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0)
		die("getresuid: %s", strerror(errno));
	if (ruid != t->uid || euid != t->uid || suid != t->uid ||
	    rgid != t->gid || egid != t->gid || sgid != t->gid)
		bug("credentials did not change as asked");
	if (setuid(0) == 0 || setgid(0) == 0)
		bug("root could be regained after dropping privileges");
}
