/*
 * twinftpd [-t | -S] [-o name=value]... [config-file]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tw_build.h"
#include "privsep/auth.h"
#include "src/common/config.h"
#include "src/common/runtime.h"
#include "src/common/sdnotify.h"
#include "src/derived.h"
#include "src/reload.h"
#include "src/listener.h"
#include "src/common/log.h"
#include "privsep/monitor.h"
#include "src/session.h"
#include "src/startcheck.h"
#include "src/status.h"
#include "src/upgrade.h"
#include "sandbox/sandbox.h"
#include "src/common/util.h"
#include "src/tls.h"

/* -o options on one command line. */
#define MAX_OVERRIDES 64

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: twinftpd [-t | -S] [-o name=value]... [config-file]\n"
		"       twinftpd -v | --dump-man-options\n");
	exit(2);
}

/*
 * The start-up self-test: the configured walls must really go up here,
 * or the operator hears about it once, clearly.
 */
static void
setup_namespaces(const struct tw_config *cfg)
{
	char why[256] = "";

	tw_rt.netns_fd = -1;
	if (cfg->isolate_network) {
		tw_rt.netns_fd = ns_create_empty_net(why, sizeof(why));
		if (tw_rt.netns_fd < 0)
			tw_log(TW_LOG_WARN, "isolate_network unavailable (%s): workers keep "
			       "the host network", why);
	}
	if (cfg->isolate) {
		tw_rt.isolate = ns_probe_isolate(why, sizeof(why));
		if (!tw_rt.isolate)
			tw_log(TW_LOG_WARN, "isolate unavailable (%s): workers share the "
			       "PID and IPC namespaces", why);
	}
}

static void
check_sandbox(const struct tw_config *cfg)
{
	int status;
	pid_t pid;

	if (cfg->seccomp_sandbox) {
		pid = fork();
		if (pid == 0) {
			sandbox_apply(ROLE_WORKER_PRELOGIN, cfg);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			die("seccomp filters cannot be installed on this system "
			    "(set seccomp_sandbox=NO to run without them where that is so)");
	}
	/* Said once per start: in inetd mode that is once per session. */
	if (!cfg->listen && !cfg->listen_ipv6)
		return;
	tw_log(TW_LOG_INFO, "sandbox: seccomp %s, network namespace %s, PID/IPC "
	       "namespaces %s, pool of %u ready sessions, login_nice %d",
	       !cfg->seccomp_sandbox ? "off" : cfg->seccomp_log_only ? "log-only" : "on",
	       tw_rt.netns_fd >= 0 ? "on" : "off", tw_rt.isolate ? "on" : "off",
	       cfg->prefork_sessions, tw_rt.login_nice);
}

/*
 * Every session process lowers its open-file limit to SESSION_MAX_FILES
 * after the capability to raise a hard limit is gone: under a lower hard
 * limit each one would die at its start and every client would see only
 * a closed connection. Refuse to start instead, on standard error (the
 * operator starting it) and in the log (the service manager's record).
 */
static void
check_file_limit(void)
{
	struct rlimit rl;
	char msg[256];

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		die("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= SESSION_MAX_FILES)
		return;
	(void)snprintf(msg, sizeof(msg), "the hard open-file limit (RLIMIT_NOFILE) is "
		       "%llu; every session needs %d: raise it (ulimit -Hn, LimitNOFILE=)",
		       (unsigned long long)rl.rlim_max, SESSION_MAX_FILES);
	tw_log(TW_LOG_ERR, "%s", msg);
	fprintf(stderr, "twinftpd: %s\n", msg);
	exit(1);
}

/*
 * Points standard input, output and error at /dev/null: nothing written
 * to them by accident (a library's message) can reach a client whose
 * connection later gets one of those numbers, or a terminal we left.
 */
static void
stdio_to_null(void)
{
	int null = open("/dev/null", O_RDWR);
	int fd;

	if (null < 0)
		die("/dev/null: %s", strerror(errno));
	for (fd = 0; fd <= 2; fd++)
		if (fd != null && dup2(null, fd) != fd)
			die("dup2 to %d: %s", fd, strerror(errno));
	if (null > 2)
		close(null);
}

/* background=YES: the listener leaves its parent and its terminal. */
static void
daemonize(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		die("setsid: %s", strerror(errno));
	stdio_to_null();
}

static void __attribute__((noreturn))
run_listener(struct tw_config *cfg)
{
	struct listen_socks ls;

	sdnotify_init();
	/* Before the bind: from then on clients may come, and tests look. */
	(void)upgrade_helper_start();
	listener_bind(cfg, &ls);
	/*
	 * A successor is a child already (of the helper, in the old
	 * listener's session): it only leaves that session and its terminal.
	 */
	if (cfg->background && upgrade_is_successor()) {
		(void)setsid();
		stdio_to_null();
	} else if (cfg->background) {
		daemonize();
	}
	listener_run(cfg, &ls);
}

/*
 * inetd mode has no listener to write the lines of the session once its
 * monitor has become the user (log.h: the log writer): this process
 * stays root as the writer, and its child runs the session. It holds the
 * log files and the writer's socket, nothing of the client, and ends
 * when the session has ended and its last lines are written.
 */
static void __attribute__((noreturn))
inetd_log_writer(const struct tw_config *cfg, pid_t session)
{
	/* Readable once the session has exited (Linux 5.3). */
	int pidfd = (int)syscall(SYS_pidfd_open, session, 0);
	int keep[] = { log_fd(), log_xferlog_fd(), log_writer_rx_fd(), pidfd };
	int status = 0;

	if (pidfd < 0)
		die("pidfd_open: %s", strerror(errno));
	tw_close_fds_except(keep, TW_ARRAY_LEN(keep));
	log_set_role("log-writer");
	sandbox_apply(ROLE_LISTENER, cfg);
	for (;;) {
		struct pollfd p[2] = { { log_writer_rx_fd(), POLLIN, 0 }, { pidfd, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (p[0].revents & POLLIN)
			(void)log_writer_serve();
		if (p[1].revents & POLLIN) {
			/* Every line the session sent is queued by now. */
			while (log_writer_serve() > 0)
				;
			while (waitpid(session, &status, 0) < 0 && errno == EINTR)
				;
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
		}
	}
}

/*
 * inetd mode: the control connection is standard input (and output). Move
 * it off 0-2 so that nothing written to stdout or stderr by accident can
 * reach the client.
 */
static void __attribute__((noreturn))
run_inetd(const struct tw_config *cfg)
{
	int fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	pid_t pid;

	if (fd < 0)
		die("inetd mode: %s", strerror(errno));
	stdio_to_null();
	/* As in every session process: a `pkill -HUP twinftpd` meant for a
	 * listener (logrotate's), or -USR2 (an upgrade), must not end this one. */
	if (signal(SIGHUP, SIG_IGN) == SIG_ERR || signal(SIGUSR2, SIG_IGN) == SIG_ERR)
		die("signal SIGHUP/SIGUSR2: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		close(fd);
		inetd_log_writer(cfg, pid);
	}
	log_writer_close_rx();
	log_set_role("monitor");
	session_run(cfg, fd);
}

static void
warn_stderr(const char *msg)
{
	fprintf(stderr, "twinftpd: warning: %s\n", msg);
}

/* At start: the log, and stderr unless it may be the client (inetd). */
static int warn_to_stderr;

static void
warn_log(const char *msg)
{
	tw_log(TW_LOG_WARN, "%s", msg);
	if (warn_to_stderr)
		warn_stderr(msg);
}

static void
warn_quiet(const char *msg)
{
	(void)msg;
}

/* The file the cross-option checks name (they belong to no line). */
static const char *check_origin;

static void
report_problem(void *ctx, enum cfg_severity sev, const char *msg)
{
	(void)ctx;
	if (sev == CFG_NOTE)
		fprintf(stderr, "twinftpd: note: %s\n", msg);
	else if (check_origin != NULL)
		fprintf(stderr, "twinftpd: %s: %s\n", check_origin, msg);
	else
		fprintf(stderr, "twinftpd: %s\n", msg);
}

int
main(int argc, char **argv)
{
	static struct tw_config cfg;
	static const char *overrides[MAX_OVERRIDES];
	static struct config_source src;
	int check_only = 0, status_only = 0;
	unsigned errors = 0;
	size_t i;
	char err[CONFIG_MAX_MSG + 256];

	upgrade_set_command(argc, argv);

	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-t") == 0 && !status_only) {
			check_only = 1;
		} else if (strcmp(a, "-S") == 0 && !check_only) {
			status_only = 1;
		} else if (strcmp(a, "-o") == 0) {
			if (++i >= (size_t)argc || src.noverrides >= TW_ARRAY_LEN(overrides))
				usage();
			overrides[src.noverrides++] = argv[i];
		} else if (strncmp(a, "-o", 2) == 0 && a[2] != '\0') {
			if (src.noverrides >= TW_ARRAY_LEN(overrides))
				usage();
			overrides[src.noverrides++] = a + 2;
		} else if (strcmp(a, "-v") == 0) {
			printf("twinftpd %s\n", TW_VERSION);
			return 0;
		} else if (strcmp(a, "--dump-man-options") == 0) {
			return config_print_man(stdout) == 0 ? 0 : 1;
		} else if (a[0] == '-' || src.path != NULL) {
			usage();
		} else {
			src.path = a;
		}
	}
	src.explicit_path = src.path != NULL;
	if (src.path == NULL)
		src.path = TW_DEFAULT_CONFIG;
	src.overrides = overrides;
	/*
	 * At start every problem is named (a reload, src/reload.c, stops at
	 * the first): each line, then the options together and (for -t) the
	 * world they name. A line in error left its option at the default,
	 * which these then check.
	 */
	config_init_defaults(&cfg);
	if (src.explicit_path || access(src.path, F_OK) == 0)
		errors += config_load_file_all(&cfg, src.path, report_problem, NULL);
	for (i = 0; i < src.noverrides; i++)
		errors += config_apply_line_all(&cfg, overrides[i], "-o", (unsigned)(i + 1),
						report_problem, NULL);
	check_origin = src.path;
	errors += config_check_all(&cfg, report_problem, NULL);
	/* -S needs status_socket alone: not the certificate, not root. */
	if (status_only) {
		if (errors != 0)
			return 1;
		return status_print(cfg.status_socket);
	}
	/*
	 * The certificate and key: -t checks them as a start would, once
	 * the TLS options themselves are sound.
	 */
	if (errors == 0 && tls_init(&cfg, err, sizeof(err)) != 0) {
		report_problem(NULL, CFG_ERROR, err);
		errors++;
	}
	check_origin = NULL;
	if (check_only) {
		startcheck_vsftpd_files(&cfg, warn_stderr);
		errors += startcheck_report(&cfg, report_problem, NULL);
	}
	if (errors != 0) {
		if (check_only)
			fprintf(stderr, "twinftpd: %u problem%s found\n", errors,
				errors == 1 ? "" : "s");
		return 1;
	}
	if (check_only) {
		config_warnings(&cfg, warn_stderr);
		return config_print(&cfg, stdout) == 0 ? 0 : 1;
	}
	if (geteuid() != 0)
		die("must be started as root (it drops privileges per session)");

	sandbox_log_only = cfg.seccomp_log_only;
	signal(SIGPIPE, SIG_IGN);
	/* A file size limit (ulimit -f, or pam_limits' fsize with
	 * session_support) fails a write with EFBIG instead of killing the
	 * process: an upload gets 451, a log or wtmp record is lost. */
	signal(SIGXFSZ, SIG_IGN);
	log_open(&cfg);
	/* In inetd mode stderr may be the client's connection. */
	if (cfg.listen || cfg.listen_ipv6)
		log_errors_to_stderr();
	warn_to_stderr = cfg.listen || cfg.listen_ipv6;
	/* Said once per start: in inetd mode a start is a session (-t says
	 * them there). */
	void (*start_warn)(const char *msg) = cfg.listen || cfg.listen_ipv6 ? warn_log
									      : warn_quiet;
	config_warnings(&cfg, start_warn);
	sandbox_settle(&cfg, start_warn);
	if (log_syslog_absent() != NULL)
		start_warn(log_syslog_absent());
	startcheck_vsftpd_files(&cfg, start_warn);
	check_file_limit();
	setup_namespaces(&cfg);
	/* Logged, and on stderr too in standalone mode (log_errors_to_stderr;
	 * in inetd mode stderr may be the client's connection). */
	if (derived_build(&cfg, 0, err, sizeof(err)) != 0)
		die("%s", err);
	reload_set_source(&src);
	sandbox_worker_no_net = tw_rt.netns_fd >= 0;
	sandbox_prepare(&cfg);
	check_sandbox(&cfg);
	if (cfg.listen || cfg.listen_ipv6)
		run_listener(&cfg);
	run_inetd(&cfg);
}
