/*
 * The session monitor against a scripted, hostile worker: a child process
 * on the other end of a SOCK_SEQPACKET socketpair sends what a
 * compromised worker could, and the test runs the monitor's real loop
 * (monitor_serve) and permit table over it. No root and no PAM: no login
 * succeeds here (local_enable=NO), so the monitor never changes
 * credentials.
 *
 * Every run is bounded by alarm(): a monitor that waits for a worker
 * that is not dying fails the test instead of hanging it.
 */
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privsep/ipc.h"
#include "privsep/monitor.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"

/* Far beyond what any case needs; only a hang reaches it. */
#define SERVE_TIMEOUT_S 20

/* What a scripted worker does once its script ran. */
enum after_script { STAY_ALIVE, EXIT_CLEANLY };

typedef enum after_script (*worker_script)(int fd);

static struct tw_config cfg;
static char last_log[TW_LOG_MAX_TEXT + 1];

static void
capture_log(int level, const char *text)
{
	(void)level;
	snprintf(last_log, sizeof(last_log), "%s", text);
}

static void
on_alarm(int sig)
{
	static const char msg[] = "test_monitor: the monitor did not return "
	    "(it waits for a worker that is alive)\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(2);
}

static int
hand_over_unexpected(struct monitor *mon)
{
	(void)mon;
	fprintf(stderr, "test_monitor: a login succeeded\n");
	abort();
}

/* --- The scripted worker -------------------------------------------- */

static void
send_msg(int fd, struct ipc_msg *m)
{
	if (ipc_send(fd, m) != 0)
		_exit(3);
}

static void
send_log(int fd, const char *text)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_LOG);
	ipc_put_u32(&m, TW_LOG_INFO);
	ipc_put_str(&m, text, strlen(text));
	send_msg(fd, &m);
}

static void
send_violation(int fd, uint32_t nr)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_SANDBOX_VIOLATION);
	ipc_put_u32(&m, nr);
	ipc_put_u32(&m, ROLE_WORKER_PRELOGIN);
	send_msg(fd, &m);
}

/* Forks the worker; the monitor's end of its socket in *mon_fd. */
static pid_t
spawn_worker(worker_script script, int *mon_fd)
{
	pid_t parent = getpid(), pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		perror("socketpair");
		exit(2);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		/* Never outlive the test, even when it times out. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(4);
		close(sv[0]);
		if (script(sv[1]) == EXIT_CLEANLY)
			_exit(0);
		for (;;)
			pause();
	}
	close(sv[1]);
	*mon_fd = sv[0];
	return pid;
}

/*
 * Runs the monitor's loop against script; returns the session's exit
 * code. Checks that the worker is dead and reaped by then.
 */
static int
serve(worker_script script, struct monitor *mon, int client_fd)
{
	pid_t pid;
	int code;

	monitor_init(mon, &cfg);
	mon->hand_over = hand_over_unexpected;
	mon->client_fd = client_fd;
	pid = spawn_worker(script, &mon->ipc_fd);
	mon->worker = pid;
	last_log[0] = '\0';
	alarm(SERVE_TIMEOUT_S);
	code = monitor_serve(mon);
	alarm(0);
	CHECK_INT(mon->worker, -1);
	/* Reaped by the monitor: no such child any more. */
	CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD);
	close(mon->ipc_fd);
	return code;
}

/* --- Scripts --------------------------------------------------------- */

static enum after_script
script_log_then_quit(int fd)
{
	send_log(fd, "hello from before the login");
	return EXIT_CLEANLY;
}

static enum after_script
script_pasv_before_login(int fd)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_PASV_LISTEN);
	send_msg(fd, &m);
	return STAY_ALIVE;
}

static enum after_script
script_malformed_log(int fd)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_LOG);
	ipc_put_u32(&m, TW_LOG_INFO);
	ipc_put_str(&m, "text", 4);
	ipc_put_u32(&m, 0);	/* a field past the schema's last */
	send_msg(fd, &m);
	return STAY_ALIVE;
}

static enum after_script
script_unknown_type(int fd)
{
	/* Type 0xffff, reserved 0, no payload. */
	static const unsigned char raw[IPC_HDR_LEN] = { 0xff, 0xff };

	if (send(fd, raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		_exit(3);
	return STAY_ALIVE;
}

static enum after_script
script_monitor_only_type(int fd)
{
	struct ipc_msg m;

	/* A reply type: the monitor sends it, it never answers one. */
	ipc_init(&m, IPC_LOGIN_RESULT);
	ipc_put_u32(&m, IPC_LOGIN_OK);
	send_msg(fd, &m);
	return STAY_ALIVE;
}

static enum after_script
script_two_violations(int fd)
{
	send_violation(fd, SYS_execve);
	send_violation(fd, SYS_execve);
	return STAY_ALIVE;
}

/* Reads the monitor's answer to a LOGIN. */
static void
expect_login_result(int fd, uint32_t want)
{
	struct ipc_msg m;
	uint32_t got;

	if (ipc_recv(fd, &m) != 0 || m.type != IPC_LOGIN_RESULT ||
	    ipc_get_u32(&m, &got) != 0 || got != want)
		_exit(5);
}

static void
send_login(int fd)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_LOGIN);
	ipc_put_str(&m, "mallory", 7);
	ipc_put_str(&m, "guess", 5);
	send_msg(fd, &m);
}

/* cfg.max_login_fails is 2: the third LOGIN is beyond its count. */
static enum after_script
script_login_beyond_count(int fd)
{
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_FAIL);
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_CLOSE);
	send_login(fd);
	return STAY_ALIVE;
}

/*
 * On SOCK_SEQPACKET a datagram of zero bytes reads as 0, like the end;
 * this worker sends one and lives on.
 */
static enum after_script
script_empty_datagram(int fd)
{
	if (send(fd, "", 0, 0) != 0)
		_exit(3);
	return STAY_ALIVE;
}

/* Closes its end of the channel, and lives on. */
static enum after_script
script_close_and_live(int fd)
{
	close(fd);
	return STAY_ALIVE;
}

static enum after_script
script_report_then_sigsys(int fd)
{
	struct rlimit none = { 0, 0 };

	/* SIGSYS dumps core by default: not here. */
	(void)setrlimit(RLIMIT_CORE, &none);
	send_violation(fd, SYS_execve);
	signal(SIGSYS, SIG_DFL);
	raise(SIGSYS);
	_exit(6);
}

/* --- Cases ----------------------------------------------------------- */

static void
test_log_before_login(void)
{
	struct monitor mon;
	struct ipc_msg m;

	CHECK_INT(serve(script_log_then_quit, &mon, -1), MONITOR_EXIT_OK);
	CHECK_INT(mon.granted[IPC_LOG], 1);

	/* monitor_dispatch alone: the same verdict, without a loop. */
	monitor_init(&mon, &cfg);
	ipc_init(&m, IPC_LOG);
	ipc_put_u32(&m, TW_LOG_INFO);
	ipc_put_str(&m, "x", 1);
	CHECK_INT(monitor_dispatch(&mon, &m), MONITOR_CONTINUE);
}

static void
test_postlogin_request_before_login(void)
{
	struct monitor mon;

	CHECK_INT(serve(script_pasv_before_login, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "unpermitted request PASV_LISTEN in state pre-login") != NULL);
	CHECK_INT(mon.granted[IPC_PASV_LISTEN], 0);
}

static void
test_malformed_and_unknown(void)
{
	struct monitor mon;

	CHECK_INT(serve(script_malformed_log, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "malformed LOG request") != NULL);
	CHECK_INT(serve(script_unknown_type, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "bad IPC message") != NULL);
	CHECK_INT(serve(script_monitor_only_type, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "unpermitted request LOGIN_RESULT") != NULL);
}

static void
test_beyond_count(void)
{
	struct monitor mon;

	CHECK_INT(serve(script_two_violations, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "SANDBOX_VIOLATION beyond its allowed count") != NULL);
	CHECK_INT(mon.granted[IPC_SANDBOX_VIOLATION], 1);

	CHECK_INT(serve(script_login_beyond_count, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "LOGIN beyond its allowed count") != NULL);
	CHECK_INT(mon.login_fails, 2);
	CHECK_INT(mon.granted[IPC_LOGIN], 2);
}

/* Issue 10, 8b: the empty datagram once froze the monitor in waitpid(). */
static void
test_empty_datagram(void)
{
	struct monitor mon;

	CHECK_INT(serve(script_empty_datagram, &mon, -1), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "empty message") != NULL);
}

/* A worker that closes the channel and lives on is not waited for either. */
static void
test_closed_channel_live_worker(void)
{
	struct monitor mon;
	char buf[64];
	int sv[2];
	ssize_t n;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK_INT(serve(script_close_and_live, &mon, sv[0]), MONITOR_EXIT_CRASH);
	CHECK(strstr(last_log, "died of signal 9") != NULL);
	/* The client is told, through the one writer of final replies. */
	n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n > 4 && memcmp(buf, "421 ", 4) == 0);
	close(sv[0]);
	close(sv[1]);
}

static void
test_violation_named_at_death(void)
{
	struct monitor mon;
	char buf[64];
	int sv[2];
	ssize_t n;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK_INT(serve(script_report_then_sigsys, &mon, sv[0]), MONITOR_EXIT_CRASH);
	CHECK_INT(mon.last_seccomp_nr, SYS_execve);
	CHECK(strstr(last_log, "killed by seccomp (syscall execve)") != NULL);
	n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n > 4 && memcmp(buf, "421 ", 4) == 0);
	close(sv[0]);
	close(sv[1]);
}

int
main(void)
{
	config_init_defaults(&cfg);
	cfg.local_enable = 0;
	cfg.anonymous_enable = 0;
	cfg.userlist_enable = 0;
	cfg.max_login_fails = 2;
	cfg.delay_failed_login = 0;
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	log_to_sink(capture_log);

	test_log_before_login();
	test_postlogin_request_before_login();
	test_malformed_and_unknown();
	test_beyond_count();
	test_empty_datagram();
	test_closed_channel_live_worker();
	test_violation_named_at_death();
	return check_summary();
}
