/*
 * The log writer (src/common/log.c): a session process that logs through
 * it gets one line per record, with its own pid as the kernel gave it and
 * no control bytes, whatever it sends: a forged newline, an unknown role,
 * a claimed pid, an oversize or fd-carrying record. The writer here is
 * this process, as the listener is in the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/util.h"
#include "tests/unit/check.h"

/* A user the sender becomes when the test runs as root, so that the
 * kernel refuses its claimed credentials as it does a session's. */
#define UNPRIVILEGED_ID 65534

static char log_path[256], xfer_path[256];

static char *
slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int
count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static int
open_fds(void)
{
	char path[64];
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++) {
		(void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

/* A record as log.c frames it: kind, level, role, text. */
static int
send_raw(char kind, int level, int role, const char *text, int with_fd, int claim_pid)
{
	char rec[3 + 9000];
	size_t len = strlen(text);
	struct iovec iov = { rec, 3 + len };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct msghdr msg;
	struct cmsghdr *c;

	rec[0] = kind;
	rec[1] = (char)level;
	rec[2] = (char)role;
	memcpy(rec + 3, text, len);
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (with_fd || claim_pid) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = with_fd ? CMSG_SPACE(sizeof(int)) : CMSG_SPACE(sizeof(struct ucred));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		if (with_fd) {
			int fd = open("/dev/null", O_RDONLY);

			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(fd));
		} else {
			struct ucred cred = { claim_pid, getuid(), getgid() };

			c->cmsg_type = SCM_CREDENTIALS;
			c->cmsg_len = CMSG_LEN(sizeof(cred));
			memcpy(CMSG_DATA(c), &cred, sizeof(cred));
		}
	}
	return sendmsg(log_writer_fd(), &msg, 0) < 0 ? -errno : 0;
}

/* The session side: what a compromised post-login monitor could send. */
static void __attribute__((noreturn))
sender(void)
{
	char big[9000];
	int rc = 0;

	if (getuid() == 0 && (setgid(UNPRIVILEGED_ID) != 0 || setuid(UNPRIVILEGED_ID) != 0))
		_exit(90);
	log_to_writer();
	/* No log descriptor is left in this process. */
	if (log_fd() >= 0 || log_xferlog_fd() >= 0)
		_exit(91);
	tw_log(TW_LOG_INFO, "hello\n2026-01-01T00:00:00Z [pid 1] [monitor] forged");
	log_from_worker(TW_LOG_WARN, "from the worker\r\x1b[2J", 4242);
	log_xferlog("1 127.0.0.1 3 /x b _ o r alice ftp 0 * c\nforged xferlog line");
	/* An unknown role and an unknown kind are dropped. */
	rc |= send_raw('L', TW_LOG_INFO, 9, "bad role", 0, 0);
	rc |= send_raw('Q', TW_LOG_INFO, 0, "bad kind", 0, 0);
	/* Another pid is refused by the kernel; the own one passes. */
	if (send_raw('L', TW_LOG_INFO, 0, "claims pid 1", 0, 1) != -EPERM)
		_exit(92);
	rc |= send_raw('L', TW_LOG_INFO, 0, "claims its own pid", 0, getpid());
	/* A descriptor does not fit the writer's control buffer: the record
	 * is dropped and the kernel closes the descriptor. */
	rc |= send_raw('L', TW_LOG_INFO, 0, "with a descriptor", 1, 0);
	/* Longer than any record: cut by the kernel, dropped whole. */
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rc |= send_raw('L', TW_LOG_INFO, 0, big, 0, 0);
	rc |= send_raw('L', TW_LOG_INFO, 0, "last", 0, 0);
	_exit(rc == 0 ? 0 : 93);
}

int
main(void)
{
	struct tw_config cfg;
	char dir[] = "/tmp/tw-logwriter-XXXXXX", want[256];
	const char *text;
	int status, fds_before;
	pid_t pid;

	if (mkdtemp(dir) == NULL)
		return 2;
	(void)snprintf(log_path, sizeof(log_path), "%s/log", dir);
	(void)snprintf(xfer_path, sizeof(xfer_path), "%s/xferlog", dir);
	config_init_defaults(&cfg);
	(void)tw_strlcpy(cfg.log_file, log_path, sizeof(cfg.log_file));
	(void)tw_strlcpy(cfg.xferlog_file, xfer_path, sizeof(cfg.xferlog_file));
	cfg.xferlog_enable = 1;
	cfg.xferlog_std_format = 1;
	cfg.syslog_enable = 0;
	log_open(&cfg);
	log_set_role("monitor");
	CHECK(log_writer_fd() >= 0 && log_writer_rx_fd() >= 0);
	fds_before = open_fds();

	pid = fork();
	if (pid == 0) {
		log_writer_close_rx();
		sender();
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Everything it sent is queued by now. */
	while (log_writer_serve() > 0)
		;
	CHECK_INT(open_fds(), fds_before);

	text = slurp(log_path);
	(void)snprintf(want, sizeof(want),
		       "[pid %d] [monitor] hello?2026-01-01T00:00:00Z [pid 1] [monitor] forged\n",
		       (int)pid);
	CHECK(strstr(text, want) != NULL);
	(void)snprintf(want, sizeof(want), "[pid %d] [worker] from the worker??[2J\n", (int)pid);
	CHECK(strstr(text, want) != NULL);
	(void)snprintf(want, sizeof(want), "[pid %d] [monitor] claims its own pid\n", (int)pid);
	CHECK(strstr(text, want) != NULL);
	CHECK(strstr(text, "with a descriptor") == NULL);
	(void)snprintf(want, sizeof(want), "[pid %d] [monitor] last\n", (int)pid);
	CHECK(strstr(text, want) != NULL);
	CHECK(strstr(text, "bad role") == NULL);
	CHECK(strstr(text, "bad kind") == NULL);
	CHECK(strstr(text, "claims pid 1") == NULL);
	CHECK(strstr(text, "bbbbbbbb") == NULL);
	/* Every line the sender made is its own: four, each with its pid. */
	(void)snprintf(want, sizeof(want), "[pid %d] ", (int)pid);
	CHECK_INT(count_lines(text, want), 4);
	CHECK_INT(count_lines(text, "\n"), 4);

	text = slurp(xfer_path);
	CHECK_INT(count_lines(text, "\n"), 1);
	CHECK(strstr(text, " 1 127.0.0.1 3 /x b _ o r alice ftp 0 * c?forged xferlog line\n") != NULL);

	(void)unlink(log_path);
	(void)unlink(xfer_path);
	(void)rmdir(dir);
	return check_summary();
}
