/*
 * Loading the seccomp policy of a role (the policies themselves are in
 * seccomp_policy.h) and reporting a forbidden syscall before dying of it.
 *
 * A forbidden syscall traps (SIGSYS). Our handler passes the syscall's
 * number and the role to the report hook the role code registered
 * (sandbox_set_violation_report(): the monitor learns it over IPC), then
 * dies of SIGSYS so that the parent sees the signal. The sandbox knows no
 * IPC; the hook runs in the handler and must stay async-signal-safe.
 * A trap cannot be survived: setting a SIGSYS handler (or SIG_IGN) is
 * killed outright by every policy, so the report handler is installed
 * before the first filter and inherited; a trap's SIGSYS that is blocked
 * is delivered by the kernel with the default action.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "src/common/config.h"
#include "tw_build.h"
#include "src/common/util.h"

#include "sandbox/seccomp_policy.h"

int sandbox_log_only;
int sandbox_worker_no_net;

/* Written by every session process: TW_PER_PROCESS (util.h). */
static sandbox_violation_report_fn violation_report TW_PER_PROCESS;
/* The role whose policy the SIGSYS handler reports for. */
static enum sandbox_role trap_role TW_PER_PROCESS;

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1			/* si_code of a seccomp trap (linux/signal.h) */
#endif

void
sandbox_set_violation_report(sandbox_violation_report_fn fn)
{
	violation_report = fn;
}

const char *
sandbox_role_name(enum sandbox_role role)
{
	if ((size_t)role >= TW_ARRAY_LEN(sc_policies) ||
	    sc_policies[role].name == NULL)
		return "unknown";
	return sc_policies[role].name;
}

const char *
sandbox_syscall_name(int nr)
{
	static char name[64];
	char *s;

	if (nr < 0)
		return "unknown";
	s = seccomp_syscall_resolve_num_arch(seccomp_arch_native(), nr);
	if (s == NULL)
		return "unknown";
	if (tw_strlcpy(name, s, sizeof(name)) == -1) {
		free(s);
		return "unknown";
	}
	free(s);
	return name;
}

/* --- The SIGSYS report ----------------------------------------------- */

/* Async-signal-safe, as long as the hook is: it and raise(). */
static void
report_sigsys(int sig, siginfo_t *si, void *uctx)
{
	long nr = -1;
	sigset_t set;

	(void)uctx;
	if (si != NULL && si->si_code == SYS_SECCOMP)
		nr = si->si_syscall;
	if (violation_report != NULL)
		violation_report(nr, trap_role);

	/* SA_RESETHAND made SIGSYS default again; deliver it now. */
	(void)raise(sig);
	/*
	 * Still here: the kernel drops a signal a PID namespace's init (a
	 * worker with isolate=YES is pid 1 of its own) sends itself. Naming
	 * SIGSYS in rt_sigaction is killed outright by every policy
	 * (SC_SIGACTION: SECCOMP_RET_KILL_PROCESS, which no process
	 * survives), so the parent still sees SIGSYS.
	 */
	{
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		(void)sigaction(sig, &dfl, NULL);
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	(void)raise(sig);
	_exit(1);	/* not reached; 1 as die(): no exit code with a meaning */
}

/*
 * Whether this process or an ancestor installed report_sigsys (inherited
 * over fork). Once any filter is loaded, setting a SIGSYS handler kills
 * the process, so the report handler goes in before the first filter (the
 * listener's) and a session process inherits it rather than setting it
 * again under its parent's filter.
 */
static int sigsys_handler_set TW_PER_PROCESS;

static void
install_sigsys_handler(enum sandbox_role role)
{
	struct sigaction sa;

	trap_role = role;
	if (sigsys_handler_set)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = report_sigsys;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) == -1)
		die("%s: sigaction(SIGSYS) failed", __func__);
	sigsys_handler_set = 1;
}

/* --- Building the filter --------------------------------------------- */

struct sc_build {
	scmp_filter_ctx ctx;
	const struct tw_config *cfg;
	const char *role;
	/* SC_SELF's pid: getpid() when the process builds its own filter,
	 * SELF_PID_SLOT in a compiled one (patched when installed). */
	scmp_datum_t self_pid;
	/* Which group owns each syscall seen so far: the first one wins. */
	struct { int nr; int group; } seen[512];
	size_t nseen;
};

/* One argument comparison; for MASKED_EQ, a is the mask and b the value. */
static struct scmp_arg_cmp
arg_cmp(unsigned int arg, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	struct scmp_arg_cmp c;

	c.arg = arg;
	c.op = op;
	c.datum_a = a;
	c.datum_b = b;
	return c;
}

#define ARG_EQ(n, v) arg_cmp((n), SCMP_CMP_EQ, (scmp_datum_t)(v), 0)
#define ARG_MASKED(n, mask, v) \
	arg_cmp((n), SCMP_CMP_MASKED_EQ, (scmp_datum_t)(mask), (scmp_datum_t)(v))

static void
add_rule(struct sc_build *b, uint32_t action, int nr, unsigned int argc,
    const struct scmp_arg_cmp *args)
{
	int r;

	r = seccomp_rule_add_array(b->ctx, action, nr, argc, args);
	if (r < 0)
		die("%s: %s policy: cannot add a rule for %s: %s", __func__,
		    b->role, sandbox_syscall_name(nr), strerror(-r));
}

static void
add_allow(struct sc_build *b, int nr, unsigned int argc, const struct scmp_arg_cmp *args)
{
	add_rule(b, SCMP_ACT_ALLOW, nr, argc, args);
}

/* Bits of open() flags that write, create or truncate. */
#define OPEN_WRITE_BITS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)

static void
add_socket_rules(struct sc_build *b, int nr, enum sc_kind kind)
{
	static const int inet[] = { AF_INET, AF_INET6 };
	const scmp_datum_t typemask = ~(scmp_datum_t)(SOCK_NONBLOCK | SOCK_CLOEXEC);
	size_t i;

	/* isolate_network: the worker's data sockets come from the monitor. */
	if (kind == SC_SOCK_TCP && sandbox_worker_no_net)
		return;

	for (i = 0; i < TW_ARRAY_LEN(inet); i++) {
		struct scmp_arg_cmp a[3] = {
			ARG_EQ(0, (scmp_datum_t)inet[i]),
			ARG_MASKED(1, typemask, SOCK_STREAM),
			ARG_EQ(2, 0),
		};

		add_allow(b, nr, 3, a);
		a[2] = ARG_EQ(2, IPPROTO_TCP);
		add_allow(b, nr, 3, a);
		if (kind == SC_SOCK_ROOT) {
			/* UDP: DNS lookups from PAM or NSS. */
			a[1] = ARG_MASKED(1, typemask, SOCK_DGRAM);
			a[2] = ARG_EQ(2, 0);
			add_allow(b, nr, 3, a);
			a[2] = ARG_EQ(2, IPPROTO_UDP);
			add_allow(b, nr, 3, a);
		}
	}
	if (kind == SC_SOCK_ROOT) {
		struct scmp_arg_cmp u = ARG_EQ(0, AF_UNIX);
		struct scmp_arg_cmp n = ARG_EQ(0, AF_NETLINK);

		add_allow(b, nr, 1, &u);
		add_allow(b, nr, 1, &n);
	}
}

static void
add_sockopt_rules(struct sc_build *b, int nr)
{
	static const struct { int level, name; } opts[] = {
		{ SOL_SOCKET, SO_OOBINLINE },	/* ABOR's urgent byte in line */
		{ SOL_SOCKET, SO_KEEPALIVE },
		{ SOL_SOCKET, SO_REUSEADDR },	/* PASV listen sockets */
		{ SOL_SOCKET, SO_LINGER },	/* data close after the last byte */
		{ SOL_SOCKET, SO_SNDBUF },
		{ SOL_SOCKET, SO_RCVBUF },
		{ SOL_SOCKET, SO_RCVTIMEO },
		{ SOL_SOCKET, SO_SNDTIMEO },
		{ IPPROTO_TCP, TCP_NODELAY },	/* replies go out at once */
		{ IPPROTO_TCP, TCP_CORK },	/* header + sendfile batching */
		{ IPPROTO_TCP, TCP_NOTSENT_LOWAT },	/* slow readers queue little */
		{ IPPROTO_IP, IP_TOS },
		{ IPPROTO_IPV6, IPV6_TCLASS },
		{ IPPROTO_IPV6, IPV6_V6ONLY },
	};
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(opts); i++) {
		struct scmp_arg_cmp a[2] = {
			ARG_EQ(1, (scmp_datum_t)opts[i].level),
			ARG_EQ(2, (scmp_datum_t)opts[i].name),
		};

		add_allow(b, nr, 2, a);
	}
}

static void
add_arg_list(struct sc_build *b, int nr, unsigned int arg, const int *vals, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct scmp_arg_cmp a = ARG_EQ(arg, vals[i]);

		add_allow(b, nr, 1, &a);
	}
}

static void
add_fcntl_rules(struct sc_build *b, int nr)
{
	static const int cmds[] = {
		F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC,
		F_GETLK, F_SETLK, F_SETLKW,	/* record locks: libc may probe them */
		F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW,	/* lock_upload_files (transfer.c file_lock) */
		F_SETPIPE_SZ,	/* a spliced STOR's pipe (transfer.c recv_file) */
	};

	add_arg_list(b, nr, 1, cmds, TW_ARRAY_LEN(cmds));
}

static void
add_ioctl_rules(struct sc_build *b, int nr)
{
	/* FIONREAD: the ABOR watch (ctrl.c). Nothing else of ours calls
	 * ioctl; O_NONBLOCK is set with fcntl. */
	static const int reqs[] = { FIONREAD };
	struct scmp_arg_cmp tty = ARG_EQ(1, TCGETS);

	add_arg_list(b, nr, 1, reqs, TW_ARRAY_LEN(reqs));
	/* isatty(): stdio asks it of a character device. */
	add_rule(b, SCMP_ACT_ERRNO(ENOTTY), nr, 1, &tty);
}

static void
add_futex_rules(struct sc_build *b, int nr)
{
	/* Requeue and PI operations have been the futex exploits; libc's
	 * locks in a single-threaded process need only wait and wake. */
	static const int ops[] = {
		FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET,
	};
	const scmp_datum_t mask =
	    ~(scmp_datum_t)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(ops); i++) {
		struct scmp_arg_cmp a = ARG_MASKED(1, mask,
		    (scmp_datum_t)ops[i]);

		add_allow(b, nr, 1, &a);
	}
}

/*
 * Allows nr when argument arg is in [lo, hi], all 64 bits compared (a
 * register with bits set above the range never matches): one masked
 * comparison per aligned power-of-two block, as a list of CIDR prefixes
 * covers a range of addresses. libseccomp takes one comparison per
 * argument in a rule, so "> lo and <= hi" cannot be one rule.
 */
static void
add_allow_range(struct sc_build *b, int nr, unsigned int arg, scmp_datum_t lo,
    scmp_datum_t hi)
{
	while (lo <= hi) {
		scmp_datum_t size = 1;
		struct scmp_arg_cmp a;

		while ((lo & (size * 2 - 1)) == 0 && lo + size * 2 - 1 <= hi)
			size *= 2;
		a = ARG_MASKED(arg, ~(size - 1), lo);
		add_allow(b, nr, 1, &a);
		lo += size;
	}
}

/* The bits of rt_sigaction's signal the kernel reads: it is an int. */
#define SIGNAL_ARG_BITS 0xffffffffULL
/* The highest signal number, real-time ones included. */
#define SIGNAL_MAX (_NSIG - 1)

/*
 * rt_sigaction(sig, act, oldact): any handler but SIGSYS's; naming SIGSYS
 * at all kills the process before any handler of its could run
 * (seccomp_policy.h says why). The kill looks at the low 32 bits of sig
 * only, as the kernel does; the allow rules compare all 64, so high bits
 * cannot smuggle SIGSYS through them (such a call gets the default
 * action). Reading SIGSYS's disposition (act NULL) is killed too: an
 * allow rule on act == NULL made libseccomp 2.5.4 drop the kill rule
 * without a word. In log-only mode there is no trap to escape, and the
 * call is logged and runs like any other forbidden one.
 */
static void
add_sigaction_rules(struct sc_build *b, int nr)
{
	struct scmp_arg_cmp a;

	a = arg_cmp(0, SCMP_CMP_LT, SIGSYS, 0);
	add_allow(b, nr, 1, &a);
	add_allow_range(b, nr, 0, SIGSYS + 1, SIGNAL_MAX);
	/* Log-only: the default action logs it (and libseccomp takes no
	 * rule whose action is the default one). */
	if (sandbox_log_only)
		return;
	a = ARG_MASKED(0, SIGNAL_ARG_BITS, SIGSYS);
	add_rule(b, SCMP_ACT_KILL_PROCESS, nr, 1, &a);
}

/*
 * Whether r allows anything under b's settings: 0 no, 1 yes; for an open
 * rule 2 when writing is allowed too.
 */
static int
rule_in_filter(const struct sc_build *b, const struct sc_rule *r)
{
	const struct tw_config *c = b->cfg;

	switch (r->kind) {
	case SC_OPEN:
		return c->write_enable ? 2 : 1;
	case SC_OPEN_ANON:
		return c->write_enable && (c->anon_upload_enable || c->anon_other_write_enable)
		       ? 2 : 1;
	case SC_IF_WRITE:
		return c->write_enable;
	case SC_IF_ANON_MKDIR:
		return c->write_enable && c->anon_mkdir_write_enable;
	case SC_IF_ANON_OTHER:
		return c->write_enable && c->anon_other_write_enable;
	case SC_SOCK_TCP:
	case SC_IF_NET:
		return !sandbox_worker_no_net;
	default:
		return 1;
	}
}

static void
add_one(struct sc_build *b, const struct sc_rule *r)
{
	struct scmp_arg_cmp a[2];

	switch (r->kind) {
	case SC_ALLOW:
		add_allow(b, r->nr, 0, NULL);
		break;
	case SC_ERRNO:
		add_rule(b, SCMP_ACT_ERRNO((uint32_t)r->val), r->nr, 0, NULL);
		break;
	case SC_NOEXEC:
		a[0] = ARG_MASKED((unsigned int)r->val, PROT_EXEC, 0);
		add_allow(b, r->nr, 1, a);
		break;
	case SC_OPEN:
	case SC_OPEN_RO:
	case SC_OPEN_ANON:
		if (rule_in_filter(b, r) == 2) {
			add_allow(b, r->nr, 0, NULL);
			break;
		}
		a[0] = ARG_MASKED((unsigned int)r->val, OPEN_WRITE_BITS, 0);
		add_allow(b, r->nr, 1, a);
		break;
	case SC_IF_WRITE:
	case SC_IF_ANON_MKDIR:
	case SC_IF_ANON_OTHER:
	case SC_IF_NET:
		if (rule_in_filter(b, r))
			add_allow(b, r->nr, 0, NULL);
		break;
	case SC_SOCK_TCP:
	case SC_SOCK_DATA:
	case SC_SOCK_ROOT:
		add_socket_rules(b, r->nr, r->kind);
		break;
	case SC_SIGKILL:
		a[0] = ARG_EQ(1, SIGKILL);
		add_allow(b, r->nr, 1, a);
		break;
	case SC_SCHED_IDLE:
		a[0] = ARG_EQ(0, 0);
		a[1] = ARG_EQ(1, SCHED_IDLE);
		add_allow(b, r->nr, 2, a);
		break;
	case SC_SELF:
		a[0] = ARG_EQ(0, b->self_pid);
		add_allow(b, r->nr, 1, a);
		break;
	case SC_FUTEX:
		add_futex_rules(b, r->nr);
		break;
	case SC_FCNTL:
		add_fcntl_rules(b, r->nr);
		break;
	case SC_SOCKOPT:
		add_sockopt_rules(b, r->nr);
		break;
	case SC_IOCTL:
		add_ioctl_rules(b, r->nr);
		break;
	case SC_RLIMIT_GET:
		/* Our own limits (pid 0), read only (new_limit NULL). */
		a[0] = ARG_EQ(0, 0);
		a[1] = ARG_EQ(2, 0);
		add_allow(b, r->nr, 2, a);
		break;
	case SC_MADV_DONTNEED:
		a[0] = ARG_EQ(2, MADV_DONTNEED);
		add_allow(b, r->nr, 1, a);
		break;
	case SC_CLONE_FLAGS:
		/* A user namespace exposes kernel code meant for root to
		 * anyone; the others are of no use without mount(). */
		a[0] = ARG_MASKED(0, CLONE_NEWUSER | CLONE_NEWNS |
		    CLONE_NEWUTS | CLONE_NEWCGROUP, 0);
		add_allow(b, r->nr, 1, a);
		break;
	case SC_NARROW:
		if (r->nr == SCMP_SYS(prctl)) {
			a[0] = ARG_EQ(0, PR_SET_NO_NEW_PRIVS);
			a[1] = ARG_EQ(1, 1);
		} else {
			a[0] = ARG_EQ(0, SECCOMP_SET_MODE_FILTER);
			a[1] = ARG_EQ(1, 0);
		}
		add_allow(b, r->nr, 2, a);
		break;
	case SC_SIGACTION:
		add_sigaction_rules(b, r->nr);
		break;
	default:
		bug("%s: rule kind %d", __func__, (int)r->kind);
	}
}

/* 1 when an earlier group of the policy already decided about nr. */
static int
claimed_elsewhere(struct sc_build *b, int nr, int group)
{
	size_t i;

	for (i = 0; i < b->nseen; i++)
		if (b->seen[i].nr == nr)
			return b->seen[i].group != group;
	if (b->nseen == TW_ARRAY_LEN(b->seen))
		bug("%s: more than %zu syscalls in a policy", __func__,
		    TW_ARRAY_LEN(b->seen));
	b->seen[b->nseen].nr = nr;
	b->seen[b->nseen].group = group;
	b->nseen++;
	return 0;
}

static void
build_policy(struct sc_build *b, const struct sc_policy *p)
{
	size_t g, i;

	for (g = 0; g < TW_ARRAY_LEN(p->groups) && p->groups[g].rules != NULL; g++) {
		const struct sc_group *grp = &p->groups[g];

		for (i = 0; i < grp->nrules; i++) {
			const struct sc_rule *r = &grp->rules[i];

			if (r->nr < 0)
				continue;	/* not a syscall on this arch */
			if (claimed_elsewhere(b, r->nr, (int)g))
				continue;
			add_one(b, r);
		}
	}
}

static void
set_attr(struct sc_build *b, enum scmp_filter_attr attr, uint32_t value)
{
	int r = seccomp_attr_set(b->ctx, attr, value);

	if (r < 0)
		die("%s: seccomp_attr_set(%d): %s", __func__, (int)attr, strerror(-r));
}

#if TW_SANITIZER_BUILD
/* LeakSanitizer's exit-time check clones a tracer thread that ptraces us:
 * no policy allows that. Check now, while we still may, and not again. */
extern void __lsan_do_leak_check(void) __attribute__((weak));
#endif

/*
 * A compiled policy is installed by other processes than the one that
 * compiled it, so SC_SELF compares with this stand-in, which
 * install_compiled() replaces with the installer's pid. Above the
 * kernel's PID_MAX_LIMIT (4194304): no real pid, and no other constant
 * of a policy, has this value.
 */
#define SELF_PID_SLOT 0x7ffffe5dU

/* Builds the libseccomp context of role; the caller releases it. */
static scmp_filter_ctx
policy_build(enum sandbox_role role, const struct tw_config *cfg, scmp_datum_t self_pid)
{
	static struct sc_build b;
	scmp_filter_ctx ctx;

	if ((size_t)role >= TW_ARRAY_LEN(sc_policies) || sc_policies[role].name == NULL)
		bug("%s: role %d", __func__, (int)role);
	/* KILL_PROCESS and LOG need API level 3 (Linux 4.14). */
	if (seccomp_api_get() < 3)
		die("seccomp: kernel or libseccomp too old (API level %u < 3); "
		    "set seccomp_sandbox=NO to run without filters",
		    seccomp_api_get());
	memset(&b, 0, sizeof(b));
	b.cfg = cfg;
	b.role = sc_policies[role].name;
	b.self_pid = self_pid;
	b.ctx = seccomp_init(sandbox_log_only ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
	if (b.ctx == NULL)
		die("%s: seccomp_init failed", __func__);
	/* A syscall of another ABI (x32, i386 on x86_64) would dodge every
	 * rule: kill it outright. */
	set_attr(&b, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/*
	 * A binary tree of syscall numbers instead of a linear chain: every
	 * syscall is judged in a few comparisons, and the kernel's action
	 * cache, which runs the filter for every syscall number when it is
	 * installed (on each login), does a fraction of the work.
	 */
	set_attr(&b, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	build_policy(&b, &sc_policies[role]);
	ctx = b.ctx;
	b.ctx = NULL;
	return ctx;
}

/*
 * BPF programs compiled once, before the listener forks anything: a
 * session process then installs its filter with one system call instead
 * of running libseccomp's compiler (which costs time on every login and
 * leaves its heap behind in every session's private memory). A policy
 * depends on a few options (policy_key), and a reload (SIGHUP) may change
 * them under the listener's own filter, where libseccomp cannot export
 * (no memfd_create): every variant is compiled at start, indexed by key.
 */
#define POLICY_KEY_WRITE 1u
#define POLICY_KEY_ANON_UPLOAD 2u
#define POLICY_KEY_ANON_MKDIR 4u
#define POLICY_KEY_ANON_OTHER 8u
#define POLICY_KEYS 16u

static struct compiled_policy {
	struct sock_filter *insns;
	unsigned short len;
} compiled[POLICY_KEYS][TW_ARRAY_LEN(sc_policies)];

/* The options role's policy depends on, as bits; the others are 0. */
static unsigned
policy_key(size_t role, const struct tw_config *c)
{
	unsigned k = c->write_enable ? POLICY_KEY_WRITE : 0;

	if (role == ROLE_WORKER_POSTLOGIN_ANON && k != 0)
		k |= (c->anon_upload_enable ? POLICY_KEY_ANON_UPLOAD : 0) |
		     (c->anon_mkdir_write_enable ? POLICY_KEY_ANON_MKDIR : 0) |
		     (c->anon_other_write_enable ? POLICY_KEY_ANON_OTHER : 0);
	return k;
}

static void
compile_role(const struct tw_config *cfg, size_t role)
{
	unsigned k = policy_key(role, cfg);
	scmp_filter_ctx ctx;
	off_t size;
	int fd;

	ctx = policy_build((enum sandbox_role)role, cfg, SELF_PID_SLOT);
	fd = memfd_create("twinftpd-bpf", MFD_CLOEXEC);
	if (fd < 0 || seccomp_export_bpf(ctx, fd) < 0 ||
	    (size = lseek(fd, 0, SEEK_END)) <= 0 ||
	    size % (off_t)sizeof(struct sock_filter) != 0 ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		die("seccomp: cannot compile the %s policy", sc_policies[role].name);
	compiled[k][role].insns = malloc((size_t)size);
	if (compiled[k][role].insns == NULL ||
	    pread(fd, compiled[k][role].insns, (size_t)size, 0) != size)
		die("seccomp: cannot read the compiled %s policy", sc_policies[role].name);
	compiled[k][role].len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	if (getenv("TW_DEBUG_BPF"))
		dprintf(2, "policy %s (options %#x): %u instructions\n",
			sc_policies[role].name, k, compiled[k][role].len);
	close(fd);
	seccomp_release(ctx);
}

/* Whether this kernel takes a seccomp filter at all (a child tries one). */
static int
seccomp_probe(void)
{
	int status;
	pid_t pid;

#if TW_TEST_HOOKS
	/* A test stands for a kernel or a container that refuses filters. */
	if (getenv("TW_TEST_NO_SECCOMP") != NULL)
		return 0;
#endif
	if (seccomp_api_get() < 3)
		return 0;
	pid = fork();
	if (pid == 0) {
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

		_exit(ctx != NULL && seccomp_load(ctx) == 0 ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

void
sandbox_settle(struct tw_config *cfg, void (*warn)(const char *msg))
{
	static int available = -1;

	if (cfg->seccomp_sandbox)
		return;
	if (available < 0)
		available = seccomp_probe();
	if (available) {
		cfg->seccomp_sandbox = 1;
		return;
	}
	if (warn != NULL)
		warn("seccomp filters cannot be installed on this system: sessions run without "
		     "them (seccomp_sandbox=NO)");
}

void
sandbox_prepare(const struct tw_config *cfg)
{
	/* Large (every string option inline), so not on the stack. */
	static struct tw_config other;
	size_t role;
	unsigned k;

	if (!cfg->seccomp_sandbox)
		return;
	for (role = 0; role < TW_ARRAY_LEN(sc_policies); role++) {
		if (sc_policies[role].name == NULL)
			continue;
		for (k = 0; k < POLICY_KEYS; k++) {
			other = *cfg;
			other.write_enable = (k & POLICY_KEY_WRITE) != 0;
			other.anon_upload_enable = (k & POLICY_KEY_ANON_UPLOAD) != 0;
			other.anon_mkdir_write_enable = (k & POLICY_KEY_ANON_MKDIR) != 0;
			other.anon_other_write_enable = (k & POLICY_KEY_ANON_OTHER) != 0;
			/* Each distinct variant once. */
			if (policy_key(role, &other) == k)
				compile_role(&other, role);
		}
	}
}

#if TW_TEST_HOOKS
/*
 * Test builds: a mark a syscall recorder (strace) sees where a role's
 * policy begins (tests/e2e/test_seccomp_usage.py). A call every policy
 * that installs another allows (SC_NARROW checks arguments 0 and 1 only),
 * which the kernel refuses (EINVAL: arguments 2 to 4 must be 0) and
 * which changes nothing.
 */
#define SANDBOX_MARK_MAGIC 0x74570000UL
static void
sandbox_mark_role(enum sandbox_role role)
{
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, SANDBOX_MARK_MAGIC | (unsigned long)role, 0, 0);
}

void
sandbox_policy_print(FILE *out, const struct tw_config *cfg)
{
	size_t role, g, i;

	for (role = 0; role < TW_ARRAY_LEN(sc_policies); role++) {
		const struct sc_policy *p = &sc_policies[role];
		struct sc_build b;

		if (p->name == NULL)
			continue;
		/* The number sandbox_mark_role() gives the role. */
		fprintf(out, "#role\t%zu\t%s\n", role, p->name);
		memset(&b, 0, sizeof(b));
		b.cfg = cfg;
		for (g = 0; g < TW_ARRAY_LEN(p->groups) && p->groups[g].rules != NULL; g++) {
			for (i = 0; i < p->groups[g].nrules; i++) {
				const struct sc_rule *r = &p->groups[g].rules[i];
				char *name;

				if (r->nr < 0 || claimed_elsewhere(&b, r->nr, (int)g) ||
				    r->kind == SC_ERRNO || !rule_in_filter(&b, r))
					continue;
				name = seccomp_syscall_resolve_num_arch(seccomp_arch_native(), r->nr);
				fprintf(out, "%s\t%s\t%s\n", p->name, p->groups[g].name,
					name != NULL ? name : "?");
				free(name);
			}
		}
	}
}
#else
static void
sandbox_mark_role(enum sandbox_role role)
{
	(void)role;
}
#endif

/*
 * The role whose policy this process installed last, inherited over
 * fork (-1: none yet). A filter inherited from the parent is the same
 * kernel object, shared; a filter installed again is a new one.
 */
static int installed_role TW_PER_PROCESS = -1;

/* Whether roles a and b have the same policy (the same groups in order). */
static int
same_policy(enum sandbox_role a, enum sandbox_role b)
{
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(sc_policies[a].groups); i++)
		if (sc_policies[a].groups[i].rules != sc_policies[b].groups[i].rules ||
		    sc_policies[a].groups[i].nrules != sc_policies[b].groups[i].nrules)
			return 0;
	return 1;
}

/*
 * Installs a compiled policy with SC_SELF's stand-in replaced by our pid
 * (the kernel copies the program, so the patched copy is freed after).
 */
static void
install_compiled(enum sandbox_role role, const struct compiled_policy *c)
{
	struct sock_fprog prog = { c->len, NULL };
	size_t i;

	prog.filter = malloc(c->len * sizeof(*prog.filter));
	if (prog.filter == NULL)
		die("seccomp: no memory for the %s policy", sc_policies[role].name);
	memcpy(prog.filter, c->insns, c->len * sizeof(*prog.filter));
	for (i = 0; i < c->len; i++)
		if (prog.filter[i].code == (BPF_JMP | BPF_JEQ | BPF_K) &&
		    prog.filter[i].k == SELF_PID_SLOT)
			prog.filter[i].k = (uint32_t)getpid();
	/* Without CAP_SYS_ADMIN the kernel wants no_new_privs first. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		die("seccomp: cannot load the %s policy: %s",
		    sc_policies[role].name, strerror(errno));
	free(prog.filter);
}

void
sandbox_apply(enum sandbox_role role, const struct tw_config *cfg)
{
	const struct compiled_policy *c;
	int r;

	if (!cfg->seccomp_sandbox)
		return;
	if ((size_t)role >= TW_ARRAY_LEN(sc_policies) || sc_policies[role].name == NULL)
		bug("%s: role %d", __func__, (int)role);
	/* Before the filter: under it, setting a SIGSYS handler is fatal. */
	if (!sandbox_log_only)
		install_sigsys_handler(role);
	/*
	 * Already under the same policy, inherited (the pre-login monitor
	 * under the listener's): installing it again would only stack an
	 * identical copy. Each copy is a JIT image the kernel frees in a
	 * work item when its last process exits; with 10,000 sessions
	 * ending at once, every copy fewer counts (README, "Where the
	 * code refines DESIGN.md").
	 */
	if (installed_role >= 0 && same_policy((enum sandbox_role)installed_role, role)) {
		sandbox_mark_role(role);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			die("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		installed_role = role;
		return;
	}
#if TW_SANITIZER_BUILD
	if (__lsan_do_leak_check != NULL)
		__lsan_do_leak_check();
#endif
	sandbox_mark_role(role);
	installed_role = role;
	c = &compiled[policy_key(role, cfg)][role];
	if (c->insns != NULL) {
		install_compiled(role, c);
		return;
	}
	{
		scmp_filter_ctx ctx = policy_build(role, cfg, (scmp_datum_t)getpid());

		r = seccomp_load(ctx);
		seccomp_release(ctx);
	}
	if (r < 0)
		die("seccomp: cannot load the %s policy: %s",
		    sc_policies[role].name, strerror(-r));
}
