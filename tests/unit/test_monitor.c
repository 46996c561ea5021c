/*
 * The session monitor against a scripted, hostile worker: a child process
 * on the other end of a SOCK_SEQPACKET socketpair sends what a
 * compromised worker could, and the test runs the monitor's real loop
 * (monitor_serve) and permit table over it. No root and no PAM: no login
 * succeeds here (local_enable=NO; an anonymous one finds no spare to take
 * over), so the monitor never changes credentials. The post-login rules
 * are driven by setting the monitor's state directly, isolate_network by
 * tw_rt.netns_fd (the monitor reads only its sign).
 *
 * Every run is bounded by alarm(): a monitor that waits for a worker
 * that is not dying fails the test instead of hanging it.
 */
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privsep/ipc.h"
#include "privsep/auth.h"
#include "privsep/monitor.h"
#include "sandbox/sandbox.h"
#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/runtime.h"
#include "src/common/util.h"

/* Far beyond what any case needs; only a hang reaches it. */
#define SERVE_TIMEOUT_S 20

/*
 * The control connection the tests give the monitor: the client at
 * PEER_IP, the server's end on the same address. FOREIGN_IP is another
 * host to the bounce check, yet loopback, so that a test can listen on it.
 */
#define PEER_IP "127.0.0.1"
#define FOREIGN_IP "127.0.0.2"
#define PEER_PORT 40000
#define LOCAL_PORT 21
/* A port of a system service: no bounce to it. */
#define LOW_PORT 80
#define LAST_LOW_PORT 1023
/* A low port where nothing listens, for a connection the rules allow. */
#define CLOSED_LOW_PORT 1
#define MAX_PORT 65535
/* PORT_CONNECT's families, and one that is neither. */
#define PORT_CONNECT_V4 4
#define PORT_CONNECT_V6 6
#define BAD_FAMILY 5
/* The LOG requests of the flood case, and then one LOGIN. */
#define FLOOD_COUNT 10000
/* Bounds any loopback connection of a case (none takes long). */
#define TEST_CONNECT_TIMEOUT_S 10

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

/* The monitor's last log line contains want (else says what it was). */
static void
expect_log(const char *want)
{
	if (strstr(last_log, want) != NULL) {
		check_passed++;
		return;
	}
	check_failed++;
	fprintf(stderr, "test_monitor: last log line \"%s\", want \"%s\" in it\n", last_log,
		want);
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

/* Who takes over at a successful login: no one, unless a case says. */
static int (*test_hand_over)(struct monitor *mon) = hand_over_unexpected;

/* --- The scripted worker -------------------------------------------- */

/*
 * The worker's own script went wrong: it dies of a signal, which the
 * monitor reports as a crash, so that no case passes by it.
 */
static void
worker_fail(void)
{
	signal(SIGUSR1, SIG_DFL);
	raise(SIGUSR1);
	_exit(3);
}

static void
send_msg(int fd, struct ipc_msg *m)
{
	if (ipc_send(fd, m) != 0)
		worker_fail();
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

static void
set_inet(struct sockaddr_storage *ss, const char *ip, unsigned port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &in->sin_addr) != 1)
		abort();
}

/*
 * A fresh monitor in state: a test sets the state directly to drive the
 * post-login rules, since no login succeeds here.
 */
static void
monitor_setup(struct monitor *mon, enum monitor_state state)
{
	monitor_init(mon, &cfg);
	mon->hand_over = test_hand_over;
	mon->state = state;
	set_inet(&mon->peer, PEER_IP, PEER_PORT);
	set_inet(&mon->local, PEER_IP, LOCAL_PORT);
	snprintf(mon->peer_ip, sizeof(mon->peer_ip), "%s", PEER_IP);
}

/*
 * Runs the monitor's loop in state against script; returns the session's
 * verdict. Checks that the worker is dead and reaped by then.
 */
static int
serve_in(enum monitor_state state, worker_script script, struct monitor *mon, int client_fd)
{
	pid_t pid;
	int code;

	monitor_setup(mon, state);
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

static int
serve(worker_script script, struct monitor *mon, int client_fd)
{
	return serve_in(MONITOR_PRELOGIN, script, mon, client_fd);
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
		worker_fail();
}

static void
send_login_as(int fd, const char *user, const char *pass)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_LOGIN);
	ipc_put_str(&m, user, strlen(user));
	ipc_put_str(&m, pass, strlen(pass));
	ipc_put_u32(&m, 0);
	send_msg(fd, &m);
}

static void
send_login(int fd)
{
	send_login_as(fd, "mallory", "guess");
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

/* --- The permit table, request by request ------------------------------
 *
 * These cases call monitor_dispatch() with the test as the worker: the
 * monitor's answers wait in the socket, and the test reads them there.
 */

struct direct {
	struct monitor mon;
	int worker_fd;		/* the worker's end: the monitor's answers */
};

static void
direct_open(struct direct *d, enum monitor_state state)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		perror("socketpair");
		exit(2);
	}
	monitor_setup(&d->mon, state);
	d->mon.ipc_fd = sv[0];
	d->worker_fd = sv[1];
}

static void
direct_close(struct direct *d)
{
	close(d->mon.ipc_fd);
	close(d->worker_fd);
}

static int
direct_dispatch(struct direct *d, struct ipc_msg *m)
{
	last_log[0] = '\0';
	return monitor_dispatch(&d->mon, m);
}

/* The monitor's answer into *r: 0, or -1 when it sent none. */
static int
direct_answer(struct direct *d, struct ipc_msg *r)
{
	struct pollfd p = { d->worker_fd, POLLIN, 0 };

	ipc_init(r, IPC_NONE);
	if (poll(&p, 1, 0) != 1)
		return -1;
	return ipc_recv(d->worker_fd, r) == 0 ? 0 : -1;
}

static int
direct_no_answer(struct direct *d)
{
	struct ipc_msg r;
	int none = direct_answer(d, &r) != 0;

	if (r.fd >= 0)
		close(r.fd);
	return none;
}

/* The one-u32 answer of type the monitor sent, or -1 when none or malformed. */
static long
direct_u32_answer(struct direct *d, enum ipc_type type)
{
	struct ipc_msg r;
	uint32_t result;

	if (direct_answer(d, &r) != 0 || r.type != type ||
	    ipc_get_u32(&r, &result) != 0 || ipc_get_end(&r) != 0)
		return -1;
	return result;
}

/* The LOGIN_RESULT the monitor sent, or -1 when it sent none. */
static long
direct_login_result(struct direct *d)
{
	return direct_u32_answer(d, IPC_LOGIN_RESULT);
}

/*
 * The FD_RESULT the monitor sent: its errno, and its descriptor in *fd
 * (-1: none); -1 when it sent none or a malformed one.
 */
static long
direct_fd_result(struct direct *d, int *fd)
{
	struct ipc_msg r;
	uint32_t err;

	*fd = -1;
	if (direct_answer(d, &r) != 0)
		return -1;
	if (r.type != IPC_FD_RESULT || ipc_get_u32(&r, &err) != 0 || ipc_get_end(&r) != 0 ||
	    ipc_check_fd_result(&r, err) != 0) {
		if (r.fd >= 0)
			close(r.fd);
		return -1;
	}
	*fd = r.fd;
	return err;
}

/* An address record (PORT_CONNECT, PROXY_CLIENT): family 4 or 6, the
 * address in 4 words, port. */
static void
build_addr_record(struct ipc_msg *m, enum ipc_type type, uint32_t family, const char *ip,
		  uint32_t port)
{
	unsigned char raw[16] = { 0 };
	size_t i;

	if (inet_pton(family == PORT_CONNECT_V6 ? AF_INET6 : AF_INET, ip, raw) != 1)
		abort();
	ipc_init(m, type);
	ipc_put_u32(m, family);
	for (i = 0; i < sizeof(raw); i += 4)
		ipc_put_u32(m, (uint32_t)raw[i] << 24 | (uint32_t)raw[i + 1] << 16 |
			    (uint32_t)raw[i + 2] << 8 | raw[i + 3]);
	ipc_put_u32(m, port);
}

static void
build_port_connect(struct ipc_msg *m, uint32_t family, const char *ip, uint32_t port)
{
	build_addr_record(m, IPC_PORT_CONNECT, family, ip, port);
}

static void
build_u32(struct ipc_msg *m, enum ipc_type type, uint32_t v)
{
	ipc_init(m, type);
	ipc_put_u32(m, v);
}

/* A well-formed request of type, as the schema describes it. */
static void
build_request(struct ipc_msg *m, uint16_t type)
{
	ipc_init(m, IPC_NONE);
	m->type = type;
	switch (type) {
	case IPC_LOGIN:
		ipc_put_str(m, "mallory", 7);
		ipc_put_str(m, "guess", 5);
		ipc_put_u32(m, 0);
		break;
	case IPC_LOG:
		ipc_put_u32(m, TW_LOG_INFO);
		ipc_put_str(m, "x", 1);
		break;
	case IPC_PORT20_CONNECT:
		ipc_put_u32(m, PEER_PORT);
		break;
	case IPC_PORT_CONNECT:
		build_port_connect(m, PORT_CONNECT_V4, PEER_IP, PEER_PORT);
		break;
	case IPC_PROXY_CLIENT:
		build_addr_record(m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, PEER_PORT);
		break;
	case IPC_LOGIN_RESULT:
		ipc_put_u32(m, IPC_LOGIN_OK);
		break;
	case IPC_FD_RESULT:
		ipc_put_u32(m, EIO);
		break;
	case IPC_CLIENT_FD:
		/* Its schema's descriptor comes with it. */
		m->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (m->fd < 0)
			abort();
		break;
	case IPC_SANDBOX_VIOLATION:
		ipc_put_u32(m, SYS_execve);
		ipc_put_u32(m, ROLE_WORKER_PRELOGIN);
		break;
	case IPC_XFERLOG:
		ipc_put_u32(m, IPC_XFER_OK);
		ipc_put_u32(m, 0);
		ipc_put_u32(m, 1234);
		ipc_put_u32(m, 10);
		ipc_put_str(m, "/f", 2);
		break;
	case IPC_CHOWN_UPLOAD:
		/* Its schema's descriptor comes with it. */
		m->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (m->fd < 0)
			abort();
		break;
	case IPC_CHOWN_RESULT:
		ipc_put_u32(m, 0);
		break;
	case IPC_USER_CHECK:
	case IPC_USER_AHEAD:
		ipc_put_str(m, "mallory", 7);
		break;
	default:
		break;	/* no payload: NONE, PASV_LISTEN, CLIENT_ACK, unknown */
	}
}

/*
 * The permit table as the design states it (DESIGN.md), written out
 * apart from monitor.c's: a rule changed there fails here.
 */
static int
expect_permitted(uint16_t type, enum monitor_state state)
{
	switch (type) {
	case IPC_LOGIN:
		return state == MONITOR_PRELOGIN;
	case IPC_LOG:
	case IPC_SANDBOX_VIOLATION:
		return 1;
	case IPC_TLS_ON:
	case IPC_PROXY_CLIENT:
	case IPC_USER_CHECK:
	case IPC_USER_AHEAD:
		return state == MONITOR_PRELOGIN;
	case IPC_PORT20_CONNECT:
	case IPC_PASV_LISTEN:
	case IPC_PORT_CONNECT:
	case IPC_XFERLOG:
	case IPC_CHOWN_UPLOAD:
		return state == MONITOR_POSTLOGIN;
	default:
		return 0;
	}
}

/*
 * A permitted request, with the defaults of the tests' cfg
 * (connect_from_port_20 and isolate_network off): answered, or the
 * session ends as its handler says.
 */
static void
check_permitted(struct direct *d, uint16_t type, int verdict)
{
	CHECK_INT(d->mon.granted[type], 1);
	switch (type) {
	case IPC_LOGIN:
		CHECK_INT(verdict, MONITOR_CONTINUE);
		CHECK_INT(direct_login_result(d), IPC_LOGIN_FAIL);
		CHECK_INT(d->mon.login_fails, 1);
		return;
	case IPC_LOG:
		CHECK_INT(verdict, MONITOR_CONTINUE);
		break;
	case IPC_SANDBOX_VIOLATION:
		CHECK_INT(verdict, MONITOR_CONTINUE);
		CHECK_INT(d->mon.last_seccomp_nr, SYS_execve);
		expect_log("forbidden syscall execve");
		break;
	case IPC_TLS_ON:
		/* The tests' cfg has no ssl_enable: a worker that claims TLS lies. */
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("TLS_ON request without ssl_enable");
		break;
	case IPC_USER_CHECK:
		/* Nor userlist_enable: only a hostile worker asks. */
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("USER_CHECK request without userlist_enable");
		break;
	case IPC_USER_AHEAD:
		/* Nor local_enable: no PAM child to start. */
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("USER_AHEAD request without local_enable");
		break;
	case IPC_PORT20_CONNECT:
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("PORT20 request without connect_from_port_20");
		break;
	case IPC_PASV_LISTEN:
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("PASV_LISTEN request without isolate_network");
		break;
	case IPC_PORT_CONNECT:
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("PORT_CONNECT request without isolate_network");
		break;
	case IPC_XFERLOG:
		CHECK_INT(verdict, MONITOR_CONTINUE);
		/* The monitor's own facts name the user and client. */
		expect_log("OK DOWNLOAD: Client \"127.0.0.1\"");
		break;
	case IPC_PROXY_CLIENT:
		/* No proxy_protocol_trusted in the tests' cfg: a worker that
		 * claims a balancer's header lies. */
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("PROXY_CLIENT request on a connection from an untrusted source");
		break;
	case IPC_CHOWN_UPLOAD:
		/* The tests' cfg has no chown_uploads. */
		CHECK_INT(verdict, MONITOR_EXIT_CRASH);
		expect_log("CHOWN_UPLOAD request without chown_uploads");
		break;
	default:
		CHECK(0);
	}
	CHECK(direct_no_answer(d));
}

/* Anything else ends the session, unanswered and uncounted. */
static void
check_refused(struct direct *d, uint16_t type, enum monitor_state state, int verdict,
	      int fd)
{
	char want[128];
	unsigned t;

	CHECK_INT(verdict, MONITOR_EXIT_CRASH);
	CHECK(direct_no_answer(d));
	for (t = 0; t < IPC_TYPE_COUNT; t++)
		CHECK_INT(d->mon.granted[t], 0);
	if (fd >= 0)
		/* The monitor closed it. */
		CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	if (fd >= 0 && type != IPC_CHOWN_UPLOAD) {
		snprintf(want, sizeof(want), "request %s with a descriptor",
			 ipc_schemas[type].name);
	} else {
		snprintf(want, sizeof(want), "unpermitted request %s in state %s",
			 type < IPC_TYPE_COUNT ? ipc_schemas[type].name : "?",
			 state == MONITOR_PRELOGIN ? "pre-login" : "post-login");
	}
	expect_log(want);
}

/* Every message type, and one past them, in both states. */
static void
test_every_type_in_every_state(void)
{
	static const enum monitor_state states[] = { MONITOR_PRELOGIN, MONITOR_POSTLOGIN };
	size_t s;
	unsigned t;

	for (s = 0; s < TW_ARRAY_LEN(states); s++) {
		for (t = 0; t <= IPC_TYPE_COUNT; t++) {
			uint16_t type = t < IPC_TYPE_COUNT ? (uint16_t)t : UINT16_MAX;
			struct direct d;
			struct ipc_msg m;
			int verdict, fd;

			direct_open(&d, states[s]);
			build_request(&m, type);
			fd = m.fd;
			verdict = direct_dispatch(&d, &m);
			if (expect_permitted(type, states[s]))
				check_permitted(&d, type, verdict);
			else
				check_refused(&d, type, states[s], verdict, fd);
			direct_close(&d);
		}
	}
}

static const char *proxy_refusal;

/* What the monitor wrote to the client (the other end, fd), at once. */
static const char *
client_got(int fd)
{
	static char reply[256];
	ssize_t n = recv(fd, reply, sizeof(reply) - 1, MSG_DONTWAIT);

	reply[n > 0 ? n : 0] = '\0';
	return reply;
}

static const char *
proxy_admit_test(struct monitor *mon)
{
	(void)mon;
	return proxy_refusal;
}

/*
 * PROXY_CLIENT: only from a trusted balancer's connection, once, before
 * TLS and any login; the client becomes the session's peer, and a
 * refusal of the listener's is the client's 421 and a clean end.
 */
static void
test_proxy_client(void)
{
	struct sa_cidr_list saved = tw_rt.proxy_trusted;
	struct direct d;
	struct ipc_msg m;
	int sv[2];

	if (sa_cidr_list_parse("127.0.0.0/30", &tw_rt.proxy_trusted) != 0)
		abort();
	proxy_refusal = NULL;
	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.proxy_admit = proxy_admit_test;
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V6, "2001:db8::7", 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_INT(direct_answer(&d, &m), 0);
	CHECK_INT(m.type, IPC_PROXY_OK);
	CHECK_STR(d.mon.peer_ip, "2001:db8::7");
	CHECK_INT(sa_port(&d.mon.peer), 5000);
	expect_log("PROXY: Client \"2001:db8::7\" via \"127.0.0.1\"");
	/* Once only. */
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("beyond its allowed count");
	direct_close(&d);

	/* A v4-mapped client is logged and checked as IPv4. */
	direct_open(&d, MONITOR_PRELOGIN);
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V6, "::ffff:10.1.2.3", 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_STR(d.mon.peer_ip, "10.1.2.3");
	CHECK_INT(d.mon.peer.ss_family, AF_INET);
	direct_close(&d);

	/* Refused by the listener: 421 to the client, no answer, a clean end. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	proxy_refusal = "There are too many connections from your internet address.";
	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.proxy_admit = proxy_admit_test;
	d.mon.client_fd = sv[0];
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_OK);
	CHECK(direct_no_answer(&d));
	CHECK_STR(client_got(sv[1]),
		  "421 There are too many connections from your internet address.\r\n");
	expect_log("refused proxied Client \"127.0.0.2\"");
	CHECK_INT(d.mon.login_fails, 0);
	direct_close(&d);
	close(sv[0]);
	close(sv[1]);

	/* After TLS or a login attempt: the worker has read the client. */
	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.ctrl_tls = 1;
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("PROXY_CLIENT request after the session started");
	direct_close(&d);
	/* After LOGIN, USER_CHECK or USER_AHEAD: a step of a login. (The
	 * request is built again: a dispatch reads it to its end.) */
	{
		static const uint16_t steps[] = { IPC_LOGIN, IPC_USER_CHECK, IPC_USER_AHEAD };

		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
			direct_open(&d, MONITOR_PRELOGIN);
			d.mon.granted[steps[i]] = 1;
			build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 5000);
			CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
			expect_log("PROXY_CLIENT request after the session started");
			direct_close(&d);
		}
	}
	/* Malformed: family, port 0. */
	direct_open(&d, MONITOR_PRELOGIN);
	build_addr_record(&m, IPC_PROXY_CLIENT, BAD_FAMILY, FOREIGN_IP, 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("malformed PROXY_CLIENT request");
	direct_close(&d);
	direct_open(&d, MONITOR_PRELOGIN);
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 0);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	direct_close(&d);
	/* From a peer outside the trusted networks. */
	if (sa_cidr_list_parse("10.0.0.0/8", &tw_rt.proxy_trusted) != 0)
		abort();
	direct_open(&d, MONITOR_PRELOGIN);
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("untrusted source");
	CHECK_STR(d.mon.peer_ip, PEER_IP);
	direct_close(&d);
	tw_rt.proxy_trusted = saved;
}

/*
 * A trusted balancer's connection whose worker never named a client
 * (PROXY_CLIENT) and asks to log in: the balancer is admitted as the
 * client (tcp_wrappers), so a hostile worker skips no check by staying
 * silent. Once a client was named, the hook is not asked.
 */
static void
test_unnamed_balancer_login(void)
{
	struct sa_cidr_list saved = tw_rt.proxy_trusted;
	struct direct d;
	struct ipc_msg m;
	int sv[2];

	if (sa_cidr_list_parse("127.0.0.0/30", &tw_rt.proxy_trusted) != 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	proxy_refusal = "Service not available.";
	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.unnamed_admit = proxy_admit_test;
	d.mon.client_fd = sv[0];
	build_request(&m, IPC_LOGIN);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_OK);
	CHECK(direct_no_answer(&d));
	CHECK_STR(client_got(sv[1]), "421 Service not available.\r\n");
	expect_log("refused login of Client \"" PEER_IP "\" (a balancer's connection");
	CHECK_INT(d.mon.login_fails, 0);
	direct_close(&d);

	/* USER_CHECK, a step before LOGIN: refused the same way, before a
	 * userlist refusal could count against the balancer. */
	cfg.userlist_enable = 1;
	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.unnamed_admit = proxy_admit_test;
	d.mon.client_fd = sv[0];
	ipc_init(&m, IPC_USER_CHECK);
	ipc_put_str(&m, "mallory", 7);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_OK);
	CHECK(direct_no_answer(&d));
	CHECK_STR(client_got(sv[1]), "421 Service not available.\r\n");
	CHECK_INT(d.mon.login_fails, 0);
	direct_close(&d);
	cfg.userlist_enable = 0;

	/* A named client: the balancer's admission is not asked again. */
	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.unnamed_admit = proxy_admit_test;
	d.mon.client_fd = sv[0];
	build_addr_record(&m, IPC_PROXY_CLIENT, PORT_CONNECT_V4, FOREIGN_IP, 5000);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_INT(direct_answer(&d, &m), 0);
	build_request(&m, IPC_LOGIN);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_INT(direct_login_result(&d), IPC_LOGIN_FAIL);
	direct_close(&d);
	close(sv[0]);
	close(sv[1]);
	tw_rt.proxy_trusted = saved;
}

/* A second violation report of one post-login worker is beyond its count. */
static void
test_violation_once_after_login(void)
{
	struct direct d;
	struct ipc_msg m;

	direct_open(&d, MONITOR_POSTLOGIN);
	build_request(&m, IPC_SANDBOX_VIOLATION);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	build_request(&m, IPC_SANDBOX_VIOLATION);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("SANDBOX_VIOLATION beyond its allowed count");
	direct_close(&d);
}

/* A TCP listener on ip and a free port (>= 1024), that port in *port. */
static int
listen_on(const char *ip, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(struct sockaddr_in);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	set_inet(&ss, ip, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		perror("listener");
		exit(2);
	}
	*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* Whether fd is a TCP socket connected to ip:port. */
static int
connected_to(int fd, const char *ip, unsigned port)
{
	struct sockaddr_storage got, want;
	socklen_t len = sizeof(got);

	set_inet(&want, ip, port);
	return getpeername(fd, (struct sockaddr *)&got, &len) == 0 &&
	       len == sizeof(struct sockaddr_in) &&
	       memcmp(&got, &want, sizeof(struct sockaddr_in)) == 0;
}

/* One request in a fresh post-login session that ends it. */
static void
expect_session_ends(struct ipc_msg *m, const char *why)
{
	struct direct d;

	direct_open(&d, MONITOR_POSTLOGIN);
	CHECK_INT(direct_dispatch(&d, m), MONITOR_EXIT_CRASH);
	CHECK(direct_no_answer(&d));
	expect_log(why);
	direct_close(&d);
}

/* The request is answered with FD_RESULT err and no descriptor. */
static void
expect_refusal(struct direct *d, struct ipc_msg *m, long err)
{
	int fd;

	CHECK_INT(direct_dispatch(d, m), MONITOR_CONTINUE);
	CHECK_INT(direct_fd_result(d, &fd), err);
	CHECK_INT(fd, -1);
}

/*
 * The request is answered with a socket connected to ip:port (and
 * FD_RESULT 0).
 */
static void
expect_connection(struct direct *d, struct ipc_msg *m, const char *ip, unsigned port)
{
	int fd;

	CHECK_INT(direct_dispatch(d, m), MONITOR_CONTINUE);
	CHECK_INT(direct_fd_result(d, &fd), 0);
	CHECK(fd >= 0 && connected_to(fd, ip, port));
	if (fd >= 0)
		close(fd);
}

/*
 * The policy let the request through: what comes back is the connection
 * attempt's own result (a port where likely nothing listens), never the
 * policy's EPERM.
 */
static void
expect_attempt(struct direct *d, struct ipc_msg *m)
{
	long err;
	int fd;

	CHECK_INT(direct_dispatch(d, m), MONITOR_CONTINUE);
	err = direct_fd_result(d, &fd);
	CHECK(err >= 0 && err != EPERM);
	CHECK((err == 0) == (fd >= 0));
	if (fd >= 0)
		close(fd);
}

static void
test_port20_rules(void)
{
	struct tw_config saved = cfg;
	struct direct d;
	struct ipc_msg m;
	unsigned port;
	int lfd, i;

	/* Without connect_from_port_20 the session ends (the matrix above); with it: */
	cfg.connect_from_port_20 = 1;
	/* Binding port 20 needs root: any source port shows the same rules. */
	cfg.ftp_data_port = 0;
	direct_open(&d, MONITOR_POSTLOGIN);
	/* Below 1024: refused with EPERM, as often as asked (no count). */
	for (i = 0; i < 3; i++) {
		build_u32(&m, IPC_PORT20_CONNECT, LOW_PORT);
		expect_refusal(&d, &m, EPERM);
	}
	build_u32(&m, IPC_PORT20_CONNECT, LAST_LOW_PORT);
	expect_refusal(&d, &m, EPERM);
	CHECK_INT(d.mon.granted[IPC_PORT20_CONNECT], 4);
	/* Above: connected, to the control peer's address. */
	lfd = listen_on(PEER_IP, &port);
	build_u32(&m, IPC_PORT20_CONNECT, port);
	expect_connection(&d, &m, PEER_IP, port);
	close(lfd);
	/* port_promiscuous lifts the low-port rule (not the address pin). */
	cfg.port_promiscuous = 1;
	build_u32(&m, IPC_PORT20_CONNECT, CLOSED_LOW_PORT);
	expect_attempt(&d, &m);
	direct_close(&d);

	build_u32(&m, IPC_PORT20_CONNECT, 0);
	expect_session_ends(&m, "malformed PORT20 request");
	build_u32(&m, IPC_PORT20_CONNECT, MAX_PORT + 1);
	expect_session_ends(&m, "malformed PORT20 request");
	ipc_init(&m, IPC_PORT20_CONNECT);
	expect_session_ends(&m, "malformed PORT20 request");
	cfg = saved;
}

static void
test_pasv_listen_rules(void)
{
	int saved_netns = tw_rt.netns_fd;
	struct sockaddr_storage ss, want;
	socklen_t len = sizeof(ss), on_len = sizeof(int);
	struct direct d;
	struct ipc_msg m;
	int fd, on = 0;

	/* isolate_network on: the monitor reads only the sign of netns_fd. */
	tw_rt.netns_fd = 0;
	direct_open(&d, MONITOR_POSTLOGIN);
	ipc_init(&m, IPC_PASV_LISTEN);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_INT(direct_fd_result(&d, &fd), 0);
	/* A listener on the control connection's own address. */
	CHECK(fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &on_len) == 0 && on == 1);
	CHECK(fd >= 0 && getsockname(fd, (struct sockaddr *)&ss, &len) == 0);
	set_inet(&want, PEER_IP, 0);
	CHECK(ss.ss_family == AF_INET && memcmp(&((struct sockaddr_in *)&ss)->sin_addr,
					&((struct sockaddr_in *)&want)->sin_addr,
					sizeof(struct in_addr)) == 0);
	if (fd >= 0)
		close(fd);
	/* As often as asked (no count). */
	ipc_init(&m, IPC_PASV_LISTEN);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_INT(direct_fd_result(&d, &fd), 0);
	if (fd >= 0)
		close(fd);
	CHECK_INT(d.mon.granted[IPC_PASV_LISTEN], 2);
	direct_close(&d);

	build_u32(&m, IPC_PASV_LISTEN, 0);
	expect_session_ends(&m, "malformed PASV_LISTEN request");
	/* Off: the session ends (the worker has a network of its own). */
	tw_rt.netns_fd = -1;
	ipc_init(&m, IPC_PASV_LISTEN);
	expect_session_ends(&m, "PASV_LISTEN request without isolate_network");
	tw_rt.netns_fd = saved_netns;
}

static void
test_port_connect_rules(void)
{
	struct tw_config saved = cfg;
	int saved_netns = tw_rt.netns_fd;
	unsigned port, fport;
	struct direct d;
	struct ipc_msg m;
	int lfd, ffd;

	tw_rt.netns_fd = 0;
	lfd = listen_on(PEER_IP, &port);
	ffd = listen_on(FOREIGN_IP, &fport);
	direct_open(&d, MONITOR_POSTLOGIN);
	/* To the control peer, above 1024: connected. */
	build_port_connect(&m, PORT_CONNECT_V4, PEER_IP, port);
	expect_connection(&d, &m, PEER_IP, port);
	/* A foreign address (a bounce), a low port, another family: EPERM. */
	build_port_connect(&m, PORT_CONNECT_V4, FOREIGN_IP, fport);
	expect_refusal(&d, &m, EPERM);
	expect_log("refused a PORT_CONNECT to a foreign address");
	build_port_connect(&m, PORT_CONNECT_V4, PEER_IP, LOW_PORT);
	expect_refusal(&d, &m, EPERM);
	expect_log("refused a PORT_CONNECT");
	build_port_connect(&m, PORT_CONNECT_V6, "::1", port);
	expect_refusal(&d, &m, EPERM);
	/* port_promiscuous: both rules lifted. */
	cfg.port_promiscuous = 1;
	build_port_connect(&m, PORT_CONNECT_V4, FOREIGN_IP, fport);
	expect_connection(&d, &m, FOREIGN_IP, fport);
	build_port_connect(&m, PORT_CONNECT_V4, PEER_IP, CLOSED_LOW_PORT);
	expect_attempt(&d, &m);
	direct_close(&d);
	close(lfd);
	close(ffd);
	cfg = saved;

	build_port_connect(&m, BAD_FAMILY, PEER_IP, PEER_PORT);
	expect_session_ends(&m, "malformed PORT_CONNECT request");
	build_port_connect(&m, PORT_CONNECT_V4, PEER_IP, 0);
	expect_session_ends(&m, "malformed PORT_CONNECT request");
	build_port_connect(&m, PORT_CONNECT_V4, PEER_IP, MAX_PORT + 1);
	expect_session_ends(&m, "malformed PORT_CONNECT request");
	build_u32(&m, IPC_PORT_CONNECT, PORT_CONNECT_V4);
	expect_session_ends(&m, "malformed PORT_CONNECT request");
	/* isolate_network off: the session ends, whatever the address. */
	tw_rt.netns_fd = -1;
	build_port_connect(&m, PORT_CONNECT_V4, PEER_IP, PEER_PORT);
	expect_session_ends(&m, "PORT_CONNECT request without isolate_network");
	tw_rt.netns_fd = saved_netns;
}

/* --- Hostile messages through the monitor's loop ------------------------ */

/* What script_raw sends: one datagram, with nfds descriptors. */
static struct {
	uint16_t type;
	uint16_t reserved;
	uint32_t declared;	/* the header's payload length */
	size_t len;		/* the payload bytes that follow */
	unsigned char payload[IPC_MAX_MSG + 1];
	int nfds;
} raw;

static void
raw_set(uint16_t type, uint32_t declared, size_t len)
{
	memset(&raw, 0, sizeof(raw));
	raw.type = type;
	raw.declared = declared;
	raw.len = len;
}

static void
put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

/* raw's datagram, but with only its first hdr_len header bytes. */
static void
send_raw(int fd, size_t hdr_len)
{
	unsigned char buf[IPC_HDR_LEN + sizeof(raw.payload)];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr mh;
	int fds[2], i;

	buf[0] = (unsigned char)raw.type;
	buf[1] = (unsigned char)(raw.type >> 8);
	buf[2] = (unsigned char)raw.reserved;
	buf[3] = (unsigned char)(raw.reserved >> 8);
	put_le32(buf + 4, raw.declared);
	memmove(buf + hdr_len, raw.payload, raw.len);
	iov.iov_base = buf;
	iov.iov_len = hdr_len + raw.len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (raw.nfds > 0) {
		struct cmsghdr *c;

		for (i = 0; i < raw.nfds; i++)
			if ((fds[i] = open("/dev/null", O_RDONLY)) < 0)
				worker_fail();
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(raw.nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(raw.nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, raw.nfds * sizeof(int));
	}
	if (sendmsg(fd, &mh, 0) != (ssize_t)iov.iov_len)
		worker_fail();
}

static enum after_script
script_raw(int fd)
{
	send_raw(fd, IPC_HDR_LEN);
	return STAY_ALIVE;
}

static enum after_script
script_raw_then_quit(int fd)
{
	send_raw(fd, IPC_HDR_LEN);
	return EXIT_CLEANLY;
}

/*
 * Reads the answer before it quits: a worker that leaves an answer
 * unread resets the channel, and the monitor sees an I/O error.
 */
static enum after_script
script_raw_login_then_quit(int fd)
{
	send_raw(fd, IPC_HDR_LEN);
	expect_login_result(fd, IPC_LOGIN_FAIL);
	return EXIT_CLEANLY;
}

/* A datagram of 3 bytes: not even a header. */
static enum after_script
script_short_header(int fd)
{
	raw.len = 0;
	send_raw(fd, 3);
	return STAY_ALIVE;
}

/* Past any descriptor a case opens. */
#define FD_PROBE_LIMIT 1024

static unsigned
count_open_fds(void)
{
	unsigned n = 0;
	int fd;

	for (fd = 0; fd < FD_PROBE_LIMIT; fd++)
		n += fcntl(fd, F_GETFD) != -1;
	return n;
}

/*
 * Runs raw's datagram (pre- or post-login) through the loop: the session
 * ends as a crash, with want in the log, and every descriptor that came
 * with it closed.
 */
static void
expect_raw_ends(enum monitor_state state, const char *want)
{
	struct monitor mon;
	struct monitor_outcome o;
	unsigned fds = count_open_fds();
	int verdict = serve_in(state, script_raw, &mon, -1);

	CHECK_INT(verdict, MONITOR_EXIT_CRASH);
	expect_log(want);
	o = monitor_outcome_of(W_EXITCODE(monitor_exit_code(&mon, verdict), 0));
	CHECK(o.bad);
	CHECK_INT(count_open_fds(), fds);
}

/* A string field: u32 length, then the bytes (c repeated). */
static size_t
raw_put_str(size_t off, size_t len, int c)
{
	put_le32(raw.payload + off, (uint32_t)len);
	memset(raw.payload + off + 4, c, len);
	return off + 4 + len;
}

static void
raw_login(size_t user_len, size_t pass_len)
{
	size_t n;

	raw_set(IPC_LOGIN, 0, 0);
	n = raw_put_str(0, user_len, 'u');
	n = raw_put_str(n, pass_len, 'p');
	put_le32(raw.payload + n, 0);	/* flags: no TLS */
	n += 4;
	raw.declared = (uint32_t)n;
	raw.len = n;
}

static void
raw_log(size_t text_len)
{
	raw_set(IPC_LOG, 0, 0);
	put_le32(raw.payload, TW_LOG_INFO);
	raw.len = raw_put_str(4, text_len, 't');
	raw.declared = (uint32_t)raw.len;
}

/* Header-only requests (a payload of zero bytes), short and lying headers. */
static void
test_empty_and_short(void)
{
	struct monitor mon;

	raw_set(IPC_LOG, 0, 0);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOG request");
	raw_set(IPC_LOGIN, 0, 0);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOGIN request");
	raw_set(IPC_SANDBOX_VIOLATION, 0, 0);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed SANDBOX_VIOLATION report");
	raw_set(IPC_PORT20_CONNECT, 0, 0);
	expect_raw_ends(MONITOR_POSTLOGIN, "malformed PORT20 request");
	raw_set(IPC_PORT_CONNECT, 0, 0);
	expect_raw_ends(MONITOR_POSTLOGIN, "malformed PORT_CONNECT request");
	/* Longer or shorter than the header says. */
	raw_log(4);
	raw.declared = (uint32_t)raw.len + 1;
	expect_raw_ends(MONITOR_PRELOGIN, "shorter than its header or declared length");
	raw_log(4);
	raw.declared = (uint32_t)raw.len - 1;
	expect_raw_ends(MONITOR_PRELOGIN, "longer than declared or allowed");
	raw_set(IPC_LOG, 0, 0);
	raw.reserved = 1;
	expect_raw_ends(MONITOR_PRELOGIN, "reserved header bits set");

	raw_set(IPC_LOG, 0, 0);
	CHECK_INT(serve(script_short_header, &mon, -1), MONITOR_EXIT_CRASH);
	expect_log("shorter than its header");
}

/* Only a request whose schema names a descriptor (CHOWN_UPLOAD) carries one. */
static void
test_unexpected_fd(void)
{
	/* One the schema forbids: the receiver refuses the message. */
	raw_log(4);
	raw.nfds = 1;
	expect_raw_ends(MONITOR_PRELOGIN, "file descriptor missing, unexpected or truncated");
	raw_log(4);
	raw.nfds = 2;
	expect_raw_ends(MONITOR_POSTLOGIN, "file descriptor missing, unexpected or truncated");
	/* One a monitor-to-worker type may carry, forged by the worker. */
	raw_set(IPC_FD_RESULT, 4, 4);
	raw.nfds = 1;
	expect_raw_ends(MONITOR_POSTLOGIN, "request FD_RESULT with a descriptor");
	raw_set(IPC_CLIENT_FD, 0, 0);
	raw.nfds = 1;
	expect_raw_ends(MONITOR_PRELOGIN, "request CLIENT_FD with a descriptor");
}

/* String fields beyond their bounds; at the bound they are served. */
static void
test_oversize_strings(void)
{
	struct monitor mon;

	/* LOG's text: the bound is the schema's, the receiver refuses. */
	raw_log(IPC_MAX_LOGMSG + 1);
	expect_raw_ends(MONITOR_PRELOGIN, "longer than declared or allowed");
	raw_log(IPC_MAX_LOGMSG);
	CHECK_INT(serve(script_raw_then_quit, &mon, -1), MONITOR_EXIT_OK);
	CHECK_INT(mon.granted[IPC_LOG], 1);
	/* A field that claims more bytes than the message has. */
	raw_log(4);
	put_le32(raw.payload + 4, 5);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOG request");
	/* A datagram past the transport's bound. */
	raw_log(IPC_MAX_PAYLOAD - 8);
	raw.len++;
	raw.declared++;
	expect_raw_ends(MONITOR_PRELOGIN, "longer than declared or allowed");

	/* LOGIN's fields fit its schema together, not one alone. */
	raw_login(IPC_MAX_USER + 1, 0);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOGIN request");
	raw_login(0, IPC_MAX_PASS + 1);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOGIN request");
	raw_login(IPC_MAX_USER + IPC_MAX_PASS + 1, 0);
	expect_raw_ends(MONITOR_PRELOGIN, "longer than declared or allowed");
	/* Flags the monitor does not know, or TLS it was never told of. */
	raw_login(1, 1);
	put_le32(raw.payload + 10, 0x80);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOGIN request");
	raw_login(1, 1);
	put_le32(raw.payload + 10, IPC_LOGIN_TLS);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOGIN request");
	raw_login(1, 1);
	put_le32(raw.payload + 10, IPC_LOGIN_PROT_P);
	expect_raw_ends(MONITOR_PRELOGIN, "malformed LOGIN request");
	/* At the bounds: an ordinary failed login. */
	raw_login(IPC_MAX_USER, IPC_MAX_PASS);
	CHECK_INT(serve(script_raw_login_then_quit, &mon, -1), MONITOR_EXIT_OK);
	CHECK_INT(mon.login_fails, 1);
	expect_log("FAIL LOGIN");
}

/*
 * A login name with a line break (only a hostile worker sends one: the
 * client's line ends at LF) stays in its one log line: no FAIL LOGIN
 * line of the worker's making for fail2ban to count.
 */
static enum after_script
script_login_forged_name(int fd)
{
	send_login_as(fd, "x\"\nJan 01 00:00:00 [pid 1] [priv] FAIL LOGIN: Client "
		      "\"203.0.113.7\", user \"root", "guess");
	expect_login_result(fd, IPC_LOGIN_FAIL);
	return EXIT_CLEANLY;
}

static void
test_login_name_one_line(void)
{
	struct monitor mon;

	CHECK_INT(serve(script_login_forged_name, &mon, -1), MONITOR_EXIT_OK);
	expect_log("FAIL LOGIN: Client \"" PEER_IP "\", user \"x\"?Jan 01 00:00:00 [pid 1]");
	CHECK(strchr(last_log, '\n') == NULL);
}

/*
 * A flood of LOG requests, then a LOGIN: still answered, and the session
 * ends normally. Worker lines go to the log file, not to the tests' sink:
 * the case opens one to count them.
 */
static enum after_script
script_flood(int fd)
{
	char text[32];
	unsigned i;

	for (i = 0; i < FLOOD_COUNT; i++) {
		snprintf(text, sizeof(text), "flood %u", i);
		send_log(fd, text);
	}
	/* A worker cannot forge a line of its own. */
	send_log(fd, "forged\n[pid 1] [monitor] line");
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_FAIL);
	return EXIT_CLEANLY;
}

static void
build_xferlog(struct ipc_msg *m, uint32_t flags, const char *path, int extra)
{
	ipc_init(m, IPC_XFERLOG);
	ipc_put_u32(m, flags);
	ipc_put_u32(m, 1);		/* 4 GiB + ... */
	ipc_put_u32(m, 5);
	ipc_put_u32(m, 2400);		/* ms */
	if (path != NULL)
		ipc_put_str(m, path, strlen(path));
	if (extra)
		ipc_put_u32(m, 0);
}

/*
 * A transfer's xferlog(5) line: the monitor's user and client, the
 * worker's path with blanks and control bytes as '_', 14 fields; a
 * malformed report ends the session.
 */
static void
test_xferlog(void)
{
	struct tw_config saved = cfg;
	char path[] = "/tmp/test_monitor_xfer.XXXXXX", line[1024], guest_line[1024] = "";
	struct direct d;
	struct ipc_msg m;
	int fd, fields = 0;
	FILE *f;
	char *p, *save = NULL;

	build_xferlog(&m, IPC_XFER_OK | 8, "/f", 0);
	expect_session_ends(&m, "malformed XFERLOG request");
	build_xferlog(&m, IPC_XFER_OK, NULL, 0);
	expect_session_ends(&m, "malformed XFERLOG request");
	build_xferlog(&m, IPC_XFER_OK, "/f", 1);
	expect_session_ends(&m, "malformed XFERLOG request");
	/* vsftpd's line quotes the worker's path, a control byte as '?'. */
	direct_open(&d, MONITOR_POSTLOGIN);
	build_xferlog(&m, IPC_XFER_OK, "/a\nb", 0);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	expect_log("\"/a?b\", 4294967301 bytes");
	direct_close(&d);

	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		exit(2);
	}
	close(fd);
	cfg.xferlog_enable = 1;
	cfg.xferlog_std_format = 1;
	cfg.syslog_enable = 0;
	cfg.log_file[0] = '\0';
	snprintf(cfg.xferlog_file, sizeof(cfg.xferlog_file), "%s", path);
	log_to_sink(NULL);
	log_open(&cfg);
	direct_open(&d, MONITOR_POSTLOGIN);
	snprintf(d.mon.login_name, sizeof(d.mon.login_name), "alice");
	build_xferlog(&m, IPC_XFER_OK | IPC_XFER_UPLOAD, "/up/a b\tc", 0);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	/* A guest (guest_enable) is named by its login name, access mode g. */
	d.mon.login_guest = 1;
	d.mon.login_anonymous = 1;
	snprintf(d.mon.login_name, sizeof(d.mon.login_name), "virt1");
	build_xferlog(&m, IPC_XFER_OK, "/d", 0);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	direct_close(&d);
	log_to_sink(capture_log);
	cfg = saved;

	f = fopen(path, "r");
	CHECK(f != NULL && fgets(line, sizeof(line), f) != NULL);
	CHECK(f != NULL && fgets(guest_line, sizeof(guest_line), f) != NULL);
	if (f != NULL)
		fclose(f);
	unlink(path);
	CHECK(strstr(guest_line, " /d b _ o g virt1 ftp 0 * c\n") != NULL);
	CHECK(strstr(line, " 2 127.0.0.1 4294967301 /up/a_b_c b _ i r alice ftp 0 * c\n")
	      != NULL);
	for (p = strtok_r(line, " \n", &save); p != NULL; p = strtok_r(NULL, " \n", &save))
		fields++;
	CHECK_INT(fields, 5 + 13);	/* the date's five, then 13 */
}

static void
test_log_flood(void)
{
	struct tw_config saved = cfg;
	char path[] = "/tmp/test_monitor_log.XXXXXX", line[TW_LOG_MAX_TEXT + 128];
	unsigned flood_lines = 0, last_seen = 0, forged = 0, other = 0;
	struct monitor_outcome o;
	struct monitor mon;
	int fd, verdict;
	FILE *f;

	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		exit(2);
	}
	close(fd);
	snprintf(cfg.log_file, sizeof(cfg.log_file), "%s", path);
	cfg.syslog_enable = 0;
	log_to_sink(NULL);
	log_open(&cfg);
	verdict = serve(script_flood, &mon, -1);
	log_to_sink(capture_log);
	cfg = saved;

	CHECK_INT(verdict, MONITOR_EXIT_OK);
	CHECK_INT(mon.granted[IPC_LOG], FLOOD_COUNT + 1);
	CHECK_INT(mon.login_fails, 1);
	o = monitor_outcome_of(W_EXITCODE(monitor_exit_code(&mon, verdict), 0));
	CHECK(!o.bad && o.failed_logins == 1);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "] [worker] flood ") != NULL)
			flood_lines++;
		else if (strstr(line, "] forged?[pid 1] [monitor] line\n") != NULL)
			forged++;
		else if (strstr(line, "FAIL LOGIN") == NULL)
			other++;
		if (strstr(line, "] flood 9999\n") != NULL)
			last_seen = 1;
	}
	if (f != NULL)
		fclose(f);
	unlink(path);
	CHECK_INT(flood_lines, FLOOD_COUNT);
	CHECK(last_seen);
	CHECK_INT(forged, 1);
	CHECK_INT(other, 0);
}

/* --- LOGIN at and after the last allowed failure ------------------------ */

static int hand_over_calls;

static int
hand_over_gone(struct monitor *mon)
{
	(void)mon;
	hand_over_calls++;
	return -1;
}

/* The client quits after the closing answer: a bad end, with 2 failures. */
static enum after_script
script_fail_out_and_quit(int fd)
{
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_FAIL);
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_CLOSE);
	return EXIT_CLEANLY;
}

/* Even the right name after the last failure is not checked any more. */
static enum after_script
script_anonymous_after_last_failure(int fd)
{
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_FAIL);
	send_login(fd);
	expect_login_result(fd, IPC_LOGIN_CLOSE);
	send_login_as(fd, "anonymous", "guest@");
	return STAY_ALIVE;
}

static enum after_script
script_anonymous_missing_dir(int fd)
{
	send_login_as(fd, "anonymous", "guest@");
	expect_login_result(fd, IPC_LOGIN_FAIL);
	return EXIT_CLEANLY;
}

static enum after_script
script_anonymous(int fd)
{
	send_login_as(fd, "anonymous", "guest@");
	return STAY_ALIVE;
}

static void
test_login_limits(void)
{
	struct tw_config saved = cfg;
	struct tw_runtime saved_rt = tw_rt;
	struct monitor_outcome o;
	struct monitor mon;
	int verdict;

	verdict = serve(script_fail_out_and_quit, &mon, -1);
	CHECK_INT(verdict, MONITOR_EXIT_LOGIN_FAILED);
	o = monitor_outcome_of(W_EXITCODE(monitor_exit_code(&mon, verdict), 0));
	CHECK(o.bad && o.failed_logins == 2);

	verdict = serve(script_login_beyond_count, &mon, -1);
	o = monitor_outcome_of(W_EXITCODE(monitor_exit_code(&mon, verdict), 0));
	CHECK(o.bad && o.failed_logins == 2);

	/*
	 * Anonymous logins need no root and no PAM: the listener's facts
	 * (tw_rt) stand in. hand_over_unexpected aborts if one is reached.
	 */
	cfg.anonymous_enable = 1;
	tw_rt.have_ftp_user = 1;
	tw_rt.ftp_uid = 65534;
	tw_rt.ftp_gid = 65534;
	snprintf(tw_rt.ftp_home, sizeof(tw_rt.ftp_home), "/nonexistent");
	/*
	 * A missing directory is found at the login: the client is refused
	 * (not told OK and then dropped), and the log names the directory.
	 */
	verdict = serve(script_anonymous_missing_dir, &mon, -1);
	CHECK_INT(verdict, MONITOR_EXIT_OK);
	expect_log("could not be checked");
	CHECK_INT(mon.state, MONITOR_PRELOGIN);
	snprintf(tw_rt.ftp_home, sizeof(tw_rt.ftp_home), "/");
	verdict = serve(script_anonymous_after_last_failure, &mon, -1);
	CHECK_INT(verdict, MONITOR_EXIT_CRASH);
	expect_log("LOGIN beyond its allowed count");
	CHECK_INT(mon.state, MONITOR_PRELOGIN);

	/* A login that succeeds when no spare can take over: the session ends. */
	hand_over_calls = 0;
	test_hand_over = hand_over_gone;
	verdict = serve(script_anonymous, &mon, -1);
	test_hand_over = hand_over_unexpected;
	CHECK_INT(verdict, MONITOR_EXIT_CRASH);
	CHECK_INT(hand_over_calls, 1);
	expect_log("spare post-login worker gone");
	cfg = saved;
	tw_rt = saved_rt;
}

/* The CHOWN_RESULT the monitor sent, or -1 when none or malformed. */
static long
direct_chown_result(struct direct *d)
{
	return direct_u32_answer(d, IPC_CHOWN_RESULT);
}

/* A CHOWN_UPLOAD of fd (the monitor closes its copy, not ours). */
static void
build_chown(struct ipc_msg *m, int fd)
{
	ipc_init(m, IPC_CHOWN_UPLOAD);
	m->fd = dup(fd);
	if (m->fd < 0)
		abort();
}

/* A fresh file in dir, as an upload creates it: its descriptor, flags given. */
static int
new_file(const char *dir, const char *name, int flags, char *path, size_t pathsz)
{
	int fd;

	snprintf(path, pathsz, "%s/%s", dir, name);
	fd = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		exit(2);
	}
	return fd;
}

/* fd's descriptor is still open in this process, and the monitor closed its own. */
static void
expect_chown_refused(struct ipc_msg *m, int fd)
{
	struct direct d;
	struct stat st;

	direct_open(&d, MONITOR_POSTLOGIN);
	d.mon.login_anonymous = 1;
	d.mon.login_uid = getuid();
	CHECK_INT(direct_dispatch(&d, m), MONITOR_CONTINUE);
	CHECK_INT(direct_chown_result(&d), EPERM);
	expect_log("refused a CHOWN_UPLOAD of a descriptor that is not a new upload");
	CHECK(fstat(fd, &st) == 0 && (st.st_mode & 07777) != 0640);
	direct_close(&d);
}

/*
 * chown_uploads: the monitor gives a new, empty file of the session's
 * own uid, open for writing, to chown_username with chown_upload_mode;
 * any other descriptor is refused (EPERM), and a request out of its
 * state (no chown_uploads, a session without anonymous privileges,
 * before the login, malformed) ends the session. Without root the
 * chown is to our own uid: the mode shows it was done.
 */
static void
test_chown_upload(void)
{
	struct tw_config saved = cfg;
	struct tw_runtime saved_rt = tw_rt;
	char dir[] = "/tmp/test_monitor_chown.XXXXXX", path[256], link2[300];
	uid_t target = geteuid() == 0 ? 65534 : getuid();
	struct direct d;
	struct ipc_msg m;
	struct stat st;
	int fd, ro, dfd, sv[2];

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	cfg.chown_uploads = 1;
	cfg.chown_upload_mode = 0640;
	tw_rt.chown_uid = target;

	/* A fresh upload: given away, with the mode, the group untouched. */
	fd = new_file(dir, "up", O_WRONLY, path, sizeof(path));
	direct_open(&d, MONITOR_POSTLOGIN);
	d.mon.login_anonymous = 1;
	d.mon.login_uid = getuid();
	build_chown(&m, fd);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_CONTINUE);
	CHECK_INT(direct_chown_result(&d), 0);
	CHECK_INT(m.fd, -1);
	CHECK(fstat(fd, &st) == 0 && st.st_uid == target && (st.st_mode & 07777) == 0640 &&
	      st.st_gid == getgid());
	/* The uploader still writes through its descriptor. */
	CHECK(write(fd, "x", 1) == 1);
	/* As often as uploads come (no count). */
	CHECK_INT(d.mon.granted[IPC_CHOWN_UPLOAD], 1);
	direct_close(&d);
	close(fd);
	unlink(path);

	/* Open read-only: not the upload's own descriptor. */
	fd = new_file(dir, "ro", O_WRONLY, path, sizeof(path));
	ro = open(path, O_RDONLY | O_CLOEXEC);
	build_chown(&m, ro);
	expect_chown_refused(&m, ro);
	close(ro);
	/* Not empty: a file written before, not a new upload. */
	CHECK(write(fd, "data", 4) == 4);
	build_chown(&m, fd);
	expect_chown_refused(&m, fd);
	close(fd);
	unlink(path);
	/* A second name: it may be someone's file under another path. */
	fd = new_file(dir, "linked", O_WRONLY, path, sizeof(path));
	snprintf(link2, sizeof(link2), "%s.2", path);
	CHECK_INT(link(path, link2), 0);
	build_chown(&m, fd);
	expect_chown_refused(&m, fd);
	unlink(link2);
	/* Another uid's file (root can make one). */
	if (geteuid() == 0) {
		CHECK_INT(fchown(fd, 12345, (gid_t)-1), 0);
		build_chown(&m, fd);
		expect_chown_refused(&m, fd);
	}
	close(fd);
	unlink(path);
	/* A directory and a socket: not regular files. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	build_chown(&m, dfd);
	expect_chown_refused(&m, dfd);
	close(dfd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	build_chown(&m, sv[0]);
	expect_chown_refused(&m, sv[0]);
	close(sv[0]);
	close(sv[1]);

	/* Out of its state: the session ends, the descriptor closed, nothing changed. */
	fd = new_file(dir, "state", O_WRONLY, path, sizeof(path));
	build_chown(&m, fd);
	expect_session_ends(&m, "CHOWN_UPLOAD request of a session without anonymous privileges");
	CHECK_INT(m.fd, -1);
	cfg.chown_uploads = 0;
	build_chown(&m, fd);
	expect_session_ends(&m, "CHOWN_UPLOAD request without chown_uploads");
	cfg.chown_uploads = 1;
	direct_open(&d, MONITOR_PRELOGIN);
	build_chown(&m, fd);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("unpermitted request CHOWN_UPLOAD in state pre-login");
	CHECK_INT(m.fd, -1);
	CHECK(direct_no_answer(&d));
	direct_close(&d);
	build_chown(&m, fd);
	ipc_put_u32(&m, 0);
	direct_open(&d, MONITOR_POSTLOGIN);
	d.mon.login_anonymous = 1;
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("malformed CHOWN_UPLOAD request");
	direct_close(&d);
	CHECK(fstat(fd, &st) == 0 && st.st_uid == getuid() && (st.st_mode & 07777) == 0644);
	close(fd);
	unlink(path);
	rmdir(dir);
	cfg = saved;
	tw_rt = saved_rt;
}

static void
build_user_check(struct ipc_msg *m, const char *user)
{
	ipc_init(m, IPC_USER_CHECK);
	ipc_put_str(m, user, strlen(user));
}

/* One USER_CHECK in d's session: the verdict's LOGIN_RESULT, or -1. */
static long
user_check(struct direct *d, const char *user, int want_verdict)
{
	struct ipc_msg m;

	build_user_check(&m, user);
	CHECK_INT(direct_dispatch(d, &m), want_verdict);
	return direct_login_result(d);
}

/*
 * userlist_enable at USER: a listed name (deny mode) is refused and
 * counted, max_login_fails refusals close, a request after that ends the
 * session; a list that cannot be read refuses everyone (BROKEN).
 */
static void
test_user_check(void)
{
	char path[] = "/tmp/tw-test-userlist-XXXXXX";
	int fd = mkstemp(path);
	struct direct d;
	struct ipc_msg m;

	CHECK(fd >= 0 && write(fd, "# deny\nmallory\n", 15) == 15);
	close(fd);
	cfg.userlist_enable = 1;
	cfg.userlist_deny = 1;
	tw_strlcpy(cfg.userlist_file, path, sizeof(cfg.userlist_file));

	direct_open(&d, MONITOR_PRELOGIN);
	CHECK_INT(user_check(&d, "alice", MONITOR_CONTINUE), IPC_LOGIN_OK);
	CHECK_INT(d.mon.login_fails, 0);
	CHECK_INT(user_check(&d, "mallory", MONITOR_CONTINUE), IPC_LOGIN_FAIL);
	expect_log("user mallory refused by userlist_file");
	CHECK_INT(user_check(&d, "mallory", MONITOR_CONTINUE), IPC_LOGIN_CLOSE);
	CHECK_INT(d.mon.login_fails, 2);
	CHECK_INT(user_check(&d, "alice", MONITOR_EXIT_CRASH), -1);
	expect_log("USER_CHECK request after max_login_fails");
	direct_close(&d);

	/* A LOGIN after the refusals that closed the session (2 of 2). */
	direct_open(&d, MONITOR_PRELOGIN);
	CHECK_INT(user_check(&d, "mallory", MONITOR_CONTINUE), IPC_LOGIN_FAIL);
	CHECK_INT(user_check(&d, "mallory", MONITOR_CONTINUE), IPC_LOGIN_CLOSE);
	build_request(&m, IPC_LOGIN);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("LOGIN request after max_login_fails");
	direct_close(&d);

	direct_open(&d, MONITOR_PRELOGIN);
	build_user_check(&m, "");
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("malformed USER_CHECK request");
	direct_close(&d);

	unlink(path);
	direct_open(&d, MONITOR_PRELOGIN);
	CHECK_INT(user_check(&d, "alice", MONITOR_CONTINUE), IPC_LOGIN_BROKEN);
	expect_log("cannot read userlist_file");
	CHECK_INT(d.mon.login_fails, 0);
	direct_close(&d);
	cfg.userlist_enable = 0;
}

/* This process's children that have not been reaped (procfs). */
static int
children_now(void)
{
	char path[64], buf[4096];
	int fd, n = 0;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	for (char *t = strtok(buf, " \n"); t != NULL; t = strtok(NULL, " \n"))
		n++;
	return n;
}

static int
user_ahead(struct direct *d, const char *user)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_USER_AHEAD);
	ipc_put_str(&m, user, strlen(user));
	return direct_dispatch(d, &m);
}

/*
 * A local user's USER forks the PAM child ahead of PASS: one child,
 * replaced by the next USER, none for an anonymous name, unanswered;
 * as many as max_login_fails per session, none after the failures
 * closed it; the session's end ends it. The child waits for a password
 * that never comes (the test never sends LOGIN), so PAM is not run.
 */
static void
test_user_ahead(void)
{
	struct direct d;
	struct ipc_msg m;
	int base = children_now();

	CHECK(base >= 0);
	cfg.local_enable = 1;
	cfg.anonymous_enable = 1;
	direct_open(&d, MONITOR_PRELOGIN);
	CHECK_INT(user_ahead(&d, "alice"), MONITOR_CONTINUE);
	CHECK(direct_no_answer(&d));
	CHECK_INT(children_now(), base + 1);
	CHECK_INT(user_ahead(&d, "anonymous"), MONITOR_CONTINUE);
	CHECK_INT(children_now(), base);
	CHECK_INT(user_ahead(&d, "bob"), MONITOR_EXIT_CRASH);
	expect_log("request USER_AHEAD beyond its allowed count");
	CHECK_INT(children_now(), base);
	CHECK_INT(monitor_end(&d.mon, MONITOR_EXIT_OK), MONITOR_EXIT_OK);
	direct_close(&d);

	direct_open(&d, MONITOR_PRELOGIN);
	CHECK_INT(user_ahead(&d, "alice"), MONITOR_CONTINUE);
	CHECK_INT(children_now(), base + 1);
	/* The session's end takes it with it. */
	CHECK_INT(monitor_end(&d.mon, MONITOR_EXIT_OK), MONITOR_EXIT_OK);
	CHECK_INT(children_now(), base);
	direct_close(&d);

	direct_open(&d, MONITOR_PRELOGIN);
	d.mon.login_fails = cfg.max_login_fails;
	CHECK_INT(user_ahead(&d, "alice"), MONITOR_EXIT_CRASH);
	expect_log("USER_AHEAD request after max_login_fails");
	CHECK_INT(children_now(), base);
	direct_close(&d);

	direct_open(&d, MONITOR_PRELOGIN);
	ipc_init(&m, IPC_USER_AHEAD);
	ipc_put_str(&m, "", 0);
	CHECK_INT(direct_dispatch(&d, &m), MONITOR_EXIT_CRASH);
	expect_log("malformed USER_AHEAD request");
	direct_close(&d);
	CHECK_INT(children_now(), base);
	cfg.local_enable = 0;
	cfg.anonymous_enable = 0;
}

/*
 * auth_name_in_file, which the user, chroot and anonymous password lists
 * share: whole lines only (a longer line's pieces are no lines), and a
 * file past its bound is unreadable, never a list cut short.
 */
static void
test_name_in_file(void)
{
	char path[] = "/tmp/tw-test-list-XXXXXX", big[1000];
	int fd = mkstemp(path);
	FILE *f;
	size_t i;

	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fprintf(f, "# a comment\nbob  \n%s\nbob@example.org\nlast", big);
	fclose(f);
	CHECK_INT(auth_name_in_file(path, "bob"), 1);
	CHECK_INT(auth_name_in_file(path, "bob@example.org"), 1);
	CHECK_INT(auth_name_in_file(path, "last"), 1);
	CHECK_INT(auth_name_in_file(path, "# a comment"), 0);
	/* A piece of the long line is not a line of its own. */
	CHECK_INT(auth_name_in_file(path, big + sizeof(big) - 1 - 100), 0);
	CHECK_INT(auth_name_in_file(path, ""), 0);
	f = fopen(path, "w");
	for (i = 0; i < 150000; i++)	/* past 1 MB */
		fprintf(f, "user%zu\n", i);
	fprintf(f, "mallory\n");
	fclose(f);
	errno = 0;
	CHECK_INT(auth_name_in_file(path, "mallory"), -1);
	CHECK_INT(errno, EFBIG);
	unlink(path);
}

/*
 * auth_rhost: what PAM_RHOST says. The address unless reverse_lookup_enable
 * asks for the name; a name as the system's own reverse lookup gives it.
 */
static void
test_rhost(void)
{
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };
	struct hostent *h = gethostbyaddr(&lo, sizeof(lo), AF_INET);
	char out[NI_MAXHOST], tiny[4];

	CHECK_INT(auth_rhost("127.0.0.1", 0, out, sizeof(out)), 0);
	CHECK_STR(out, "127.0.0.1");
	CHECK_INT(auth_rhost("127.0.0.1", 0, tiny, sizeof(tiny)), -1);
	/* Not an address: passed on as it is, never looked up. */
	CHECK_INT(auth_rhost("not-an-address", 1, out, sizeof(out)), 0);
	CHECK_STR(out, "not-an-address");
	/* The loopback address's name where the system has one (its
	 * /etc/hosts), which resolves back to it; else the address. */
	if (h != NULL && h->h_name != NULL) {
		CHECK_INT(auth_rhost("127.0.0.1", 1, out, sizeof(out)), 1);
		CHECK_STR(out, h->h_name);
	} else {
		CHECK_INT(auth_rhost("127.0.0.1", 1, out, sizeof(out)), 0);
		CHECK_STR(out, "127.0.0.1");
	}
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
	cfg.connect_timeout = TEST_CONNECT_TIMEOUT_S;
	/* isolate_network off unless a case turns it on. */
	tw_rt.netns_fd = -1;
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	log_to_sink(capture_log);

	test_name_in_file();
	test_rhost();
	test_unnamed_balancer_login();
	test_log_before_login();
	test_postlogin_request_before_login();
	test_malformed_and_unknown();
	test_beyond_count();
	test_empty_datagram();
	test_closed_channel_live_worker();
	test_violation_named_at_death();
	test_every_type_in_every_state();
	test_violation_once_after_login();
	test_port20_rules();
	test_pasv_listen_rules();
	test_port_connect_rules();
	test_empty_and_short();
	test_unexpected_fd();
	test_oversize_strings();
	test_log_flood();
	test_login_name_one_line();
	test_xferlog();
	test_chown_upload();
	test_login_limits();
	test_proxy_client();
	test_user_check();
	test_user_ahead();
	return check_summary();
}
