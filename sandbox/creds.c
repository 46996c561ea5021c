/*
 * The one place that changes credentials. Every session process that
 * stops being root passes through creds_become(), in this order:
 * supplementary groups, chroot, capability bounding set, gid, uid,
 * remaining capability sets, no_new_privs, dumpable, rlimits, and finally
 * a check that root cannot come back.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/util.h"

static void bound_capabilities(const cap_value_t *caps, int n);
static void set_capabilities(const cap_value_t *caps, int n);

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
	bound_capabilities(NULL, 0);
	if (setresgid(t->gid, t->gid, t->gid) != 0)
		die("setresgid(%u): %s", (unsigned)t->gid, strerror(errno));
	if (setresuid(t->uid, t->uid, t->uid) != 0)
		die("setresuid(%u): %s", (unsigned)t->uid, strerror(errno));
	set_capabilities(NULL, 0);
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
	set_limit(RLIMIT_NOFILE, SESSION_MAX_FILES);
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

static int
cap_listed(cap_value_t c, const cap_value_t *caps, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (caps[i] == c)
			return 1;
	return 0;
}

/*
 * Set once this process emptied its bounding set; a fork inherits both the
 * set and the flag. The pre-login monitor empties it before any client
 * (bounding limits only what an exec or a raised inheritable set could
 * gain, and nothing here execs): its workers and its post-login self then
 * skip the ~50 prctl calls a drop costs on the login's path.
 */
static int bounding_empty TW_PER_PROCESS;

/* Drops every capability but caps[0..n) from the bounding set (needs CAP_SETPCAP). */
static void
bound_capabilities(const cap_value_t *caps, int n)
{
	cap_value_t c;

	if (bounding_empty)
		return;
	for (c = 0; c <= CAP_LAST_CAP; c++) {
		/*
		 * Each drop commits a new set of credentials: skip the ones a
		 * parent dropped already (a worker inherits the monitor's cut
		 * set), thirty fewer per worker.
		 */
		if (cap_listed(c, caps, n) || cap_get_bound(c) == CAP_CLEAR)
			continue;
		if (cap_drop_bound(c) != 0 && errno != EINVAL)
			die("cannot drop capability %d from the bounding set: %s",
			    (int)c, strerror(errno));
	}
	bounding_empty = n == 0;
}

/*
 * The capability sets of this process, read and written with capget and
 * capset directly rather than libcap's cap_get_proc(), which allocates: a
 * heap page written after a fork is private memory of the session for its
 * whole life.
 */
typedef struct __user_cap_data_struct cap_sets[_LINUX_CAPABILITY_U32S_3];

static int
caps_get(cap_sets now)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	memset(now, 0, sizeof(cap_sets));
	return capget(&hdr, now);
}

static void
caps_set(cap_sets next)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	if (capset(&hdr, next) != 0)
		die("cannot set capabilities: %s", strerror(errno));
}

/* Where cap is in the sets: word and bit; 0, or -1 when out of range. */
static int
cap_pos(int cap, unsigned *word, unsigned *bit)
{
	if (cap < 0 || (unsigned)cap / 32 >= _LINUX_CAPABILITY_U32S_3)
		return -1;
	*word = (unsigned)cap / 32;
	*bit = 1u << ((unsigned)cap % 32);
	return 0;
}

/*
 * Sets permitted and effective to caps[0..n) (those of them the process
 * still has: a container may have taken some away already); no
 * inheritable, no ambient.
 */
static void
set_capabilities(const cap_value_t *caps, int n)
{
	cap_sets now, next;
	unsigned word, bit;
	int i;

	memset(next, 0, sizeof(next));
	if (caps_get(now) != 0)
		die("cannot read capabilities: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		if (cap_pos(caps[i], &word, &bit) != 0 || !(now[word].permitted & bit))
			continue;
		next[word].permitted |= bit;
		next[word].effective |= bit;
	}
	caps_set(next);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
		die("cannot clear ambient capabilities: %s", strerror(errno));
}

void
creds_monitor_prelogin(int keep_sys_admin, int keep_sys_nice, int keep_chown)
{
	static const cap_value_t always[] = {
		CAP_SETUID, CAP_SETGID, CAP_SYS_CHROOT, CAP_SETPCAP, CAP_KILL,
		CAP_DAC_READ_SEARCH, CAP_NET_BIND_SERVICE,
		CAP_AUDIT_WRITE,
	};
	/* always, then CAP_CHOWN, CAP_SYS_ADMIN and CAP_SYS_NICE when asked for */
	cap_value_t caps[TW_ARRAY_LEN(always) + 3];
	int n = (int)TW_ARRAY_LEN(always);

	memcpy(caps, always, sizeof(always));
	if (keep_chown)
		caps[n++] = CAP_CHOWN;	/* chown_uploads, kept past the login */
	if (keep_sys_admin)
		caps[n++] = CAP_SYS_ADMIN;	/* for namespaces */
	if (keep_sys_nice)
		caps[n++] = CAP_SYS_NICE;	/* login_nice: the priority back */

	/* Nothing here executes programs, so the bounding set, which limits
	 * only what an exec could gain, goes whole: the login then has none
	 * to drop (bounding_empty). The working set is caps. */
	bound_capabilities(NULL, 0);
	set_capabilities(caps, n);
	/* Should anything try to exec, it gains nothing. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die("PR_SET_DUMPABLE: %s", strerror(errno));
}

int
creds_have(int cap)
{
	cap_sets now;
	unsigned word, bit;

	if (cap_pos(cap, &word, &bit) != 0 || caps_get(now) != 0)
		return 0;
	return (now[word].effective & bit) != 0;
}

void
creds_drop_cap(int cap)
{
	cap_sets now;
	unsigned word, bit;

	if (cap_pos(cap, &word, &bit) != 0)
		bug("%s: capability %d", __func__, cap);
	if (caps_get(now) != 0)
		die("cannot read capabilities: %s", strerror(errno));
	if (!((now[word].permitted | now[word].effective | now[word].inheritable) & bit))
		return;
	now[word].permitted &= ~bit;
	now[word].effective &= ~bit;
	now[word].inheritable &= ~bit;
	caps_set(now);
}

void
creds_monitor_postlogin(uid_t uid, gid_t gid, const char *chroot_dir, int keep_net_bind,
			int keep_chown)
{
	cap_value_t keep[2];
	int n = 0;

	if (keep_net_bind)
		keep[n++] = CAP_NET_BIND_SERVICE;
	if (keep_chown)
		keep[n++] = CAP_CHOWN;

	if (uid == 0 || gid == 0)
		bug("creds_monitor_postlogin to uid %u gid %u", (unsigned)uid, (unsigned)gid);
	if (setgroups(0, NULL) != 0)
		die("setgroups: %s", strerror(errno));
	if (chdir(chroot_dir) != 0 || chroot(".") != 0 || chdir("/") != 0)
		die("chroot to %s: %s", chroot_dir, strerror(errno));
	bound_capabilities(keep, n);
	/* Keep the permitted set across the uid change, then cut it. */
	if (prctl(PR_SET_KEEPCAPS, n > 0, 0, 0, 0) != 0)
		die("PR_SET_KEEPCAPS: %s", strerror(errno));
	if (setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
		die("cannot drop the monitor to uid %u: %s", (unsigned)uid, strerror(errno));
	set_capabilities(keep, n);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0)
		die("PR_SET_KEEPCAPS: %s", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		die("PR_SET_DUMPABLE: %s", strerror(errno));
	if (setuid(0) == 0)
		bug("root could be regained by the post-login monitor");
}
