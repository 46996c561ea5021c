/*
 * The cage every session process lives in: credentials (creds.c) and
 * seccomp policies (seccomp.c). Only creds.c calls setuid/setgid/chroot.
 */
#ifndef TW_SANDBOX_H
#define TW_SANDBOX_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct tw_config;

/* Process roles, each with its own seccomp policy. */
enum sandbox_role {
	ROLE_LISTENER,		/* after its sockets are bound */
	ROLE_MONITOR_PRELOGIN,	/* session monitor before login (runs PAM) */
	ROLE_MONITOR_POSTLOGIN,	/* session monitor after login */
	ROLE_WORKER_PRELOGIN,	/* protocol worker before login */
	ROLE_WORKER_POSTLOGIN,	/* protocol worker as the user */
	ROLE_TLS_RELAY,		/* a TLS session's pre-login worker after the login */
	ROLE_WORKER_POSTLOGIN_ANON,	/* protocol worker of an anonymous session */
};

const char *sandbox_role_name(enum sandbox_role role);

/*
 * The open-file limit (soft and hard) of every session process once it
 * stops being root: a worker needs a control socket, an IPC socket, a
 * data socket, a passive listener, a file and a directory, plus slack for
 * libc. Set after the capability to raise a hard limit is gone, so the
 * server must start with a hard RLIMIT_NOFILE at least this high.
 */
#define SESSION_MAX_FILES 32

/* What a session process becomes. */
struct creds_target {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;	/* supplementary groups, looked up by the monitor */
	int ngroups;		/* 0 = none */
	const char *chroot_dir;	/* NULL = no chroot */
	const char *start_dir;	/* chdir here after the chroot (NULL = "/") */
	mode_t umask;
	int allow_writeable_chroot;
};

/*
 * The one function that changes credentials: supplementary groups, chroot,
 * gid, uid (real, effective, saved), capabilities (all sets cleared,
 * bounding set emptied), PR_SET_NO_NEW_PRIVS, RLIMIT_NPROC 0 and a small
 * RLIMIT_NOFILE, then checks that root cannot be regained. Dies on any
 * failure: a half-changed process must never run.
 */
void creds_become(const struct creds_target *t);

/*
 * The session monitor before login: bounding set emptied (nothing it or
 * its children run execs), permitted and effective sets cut to what
 * starting workers and running PAM need
 * (setuid/setgid, chroot, setpcap, kill, dac_read_search for files PAM
 * and user_config_dir read that root does not own, net_bind_service,
 * audit_write; no dac_override: what PAM writes (faillock tallies, the
 * shadow file) is root's, so its owner bits apply; chown only for
 * chown_uploads, which the post-login monitor keeps it for; sys_admin only
 * for isolate and isolate_network, to set up workers' namespaces;
 * sys_nice only for login_nice, to give the session its priority back;
 * the PAM child drops it first thing).
 * Dies on failure.
 */
void creds_monitor_prelogin(int keep_sys_admin, int keep_sys_nice, int keep_chown);

/* Whether this process has capability cap in its effective set. */
int creds_have(int cap);

/* Drops cap from the permitted, effective and inheritable sets (no-op
 * when not held); dies on failure. */
void creds_drop_cap(int cap);

/*
 * The session monitor after login: chroots to chroot_dir (it no longer
 * needs any file), becomes uid/gid, and keeps only CAP_NET_BIND_SERVICE
 * when keep_net_bind (connect_from_port_20) and CAP_CHOWN when keep_chown
 * (chown_uploads in an anonymous session), else no capability at all.
 * no_new_privs and not dumpable, like every other session process.
 */
void creds_monitor_postlogin(uid_t uid, gid_t gid, const char *chroot_dir, int keep_net_bind,
			     int keep_chown);

/*
 * Installs the seccomp policy of role (unless cfg->seccomp_sandbox is NO).
 * Dies if the filter cannot be loaded. The first call in a line of
 * processes also installs the SIGSYS report handler, before the filter;
 * the processes forked after it inherit that handler, for under every
 * policy naming SIGSYS in rt_sigaction() kills the process outright (no
 * process can outlive a trap with a handler of its own).
 */
void sandbox_apply(enum sandbox_role role, const struct tw_config *cfg);

/*
 * Compiles every role's policy to BPF once (in the listener, before any
 * fork), so that sandbox_apply() in a session process is one system call.
 * Without it sandbox_apply() compiles on the spot. Compiles each policy
 * for every value of the options it depends on (write_enable; for the
 * anonymous worker also anon_mkdir_write_enable and
 * anon_other_write_enable), so that a reload may change them; a policy
 * must depend on no other option (a reload could not recompile it under
 * the listener's filter).
 */
void sandbox_prepare(const struct tw_config *cfg);

/*
 * Test builds only: prints, one per line, "role<TAB>group<TAB>syscall" for
 * every syscall a role's filter allows under cfg (first group wins; the
 * errno refusals left out), after a line "#role<TAB>N<TAB>role" with the
 * number a test build's mark names it by, for
 * tests/e2e/test_seccomp_usage.py.
 */
void sandbox_policy_print(FILE *out, const struct tw_config *cfg);

/*
 * seccomp_sandbox=NO, as vsftpd.conf files have it (a third of 141 public
 * ones: a workaround for vsftpd's own filter), does not turn twinftpd's
 * filters off: where this kernel takes a filter, cfg->seccomp_sandbox is
 * set to 1 again. Where it takes none, the sessions run without, and
 * warn (NULL: quiet) says so. seccomp_sandbox=YES is left alone: a start
 * then fails where filters cannot be installed. Called at start and at a
 * reload (the probe, a child that loads an empty filter, runs once).
 */
void sandbox_settle(struct tw_config *cfg, void (*warn)(const char *msg));

/*
 * Debug switch (config: seccomp_log_only): a forbidden syscall is logged by
 * the kernel (audit/dmesg) and runs, instead of killing the process. Read
 * by sandbox_apply().
 */
extern int sandbox_log_only;

/*
 * Set before sandbox_prepare() when workers live in the empty network
 * namespace (isolate_network): the post-login worker may not create
 * sockets at all, only accept on the listening socket the monitor gave it.
 */
extern int sandbox_worker_no_net;

/*
 * Called from the SIGSYS handler of a process its filter kills, with the
 * syscall's number (-1: the trap named none) and the role whose policy
 * forbade it; the process dies of SIGSYS right after. Not called for a
 * process killed without a trap (it tried to set a SIGSYS handler, or
 * had SIGSYS blocked): its parent sees only the signal. It must be
 * async-signal-safe (no malloc, no stdio). The sandbox knows no IPC: the
 * role code registers the reporter (ipc_report_violations_to() sends it
 * to the monitor). NULL, the default: no report.
 */
typedef void (*sandbox_violation_report_fn)(long nr, enum sandbox_role role);
void sandbox_set_violation_report(sandbox_violation_report_fn fn);

/*
 * Names syscall number nr of the native architecture (from a violation
 * report), or "unknown". The string lives in a
 * static buffer until the next call.
 */
const char *sandbox_syscall_name(int nr);

/* --- namespaces.c --- */

/*
 * Creates an empty network namespace and returns a descriptor for it, or
 * -1 with the reason in why (the kernel refuses: a container).
 */
int ns_create_empty_net(char *why, size_t whylen);
/* Whether PID and IPC namespaces can be made; the reason when not. */
int ns_probe_isolate(char *why, size_t whylen);
/* fork() of session processes (see namespaces.c); with isolate, the
 * child gets new PID and IPC namespaces. */
pid_t ns_fork(int isolate);
/* Moves the calling process into the namespace (no-op for -1). */
void ns_join_net(int netns_fd);

#endif
