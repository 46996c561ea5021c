/*
 * rawsess: what a process per session costs at the least on this machine,
 * the floor bench/compare puts beside the login and QUIT figures (issue 15
 * asks 300 QUITs in 0.01 s and logins faster than pyftpdlib, one process).
 *
 *   rawsess N [-r REPS]
 *
 * Two figures, as ftpbench's suite times them, against a server that
 * speaks just enough FTP and nothing else (no files, no password check,
 * no credentials or filters):
 *
 *   login  N clients, one after another: connect, 220, USER -> 331,
 *          PASS -> 230; each session stays open (ftpbench's "N concurrent
 *          clients (connect, login)")
 *   quit   QUIT to all N at once; ends at the last 221 ("N concurrent
 *          clients (QUIT)")
 *
 * The servers:
 *
 *   one-process             one process, epoll (as pyftpdlib)
 *   process-per-session     a listener that hands each connection to a
 *                           process forked before it (SCM_RIGHTS) and forks
 *                           the next; the session's process answers and,
 *                           after its 221, exits (as a per-session server
 *                           does)
 *   process-per-session+idle-exit
 *                           the same, but after its 221 the process lowers
 *                           itself to SCHED_IDLE and naps TW_IDLE_NAP_MS before it
 *                           exits, so the exits wait for the CPU that the
 *                           other replies leave (what twinftpd's worker
 *                           does, tw_sched_idle)
 *   process-per-session+late-exit
 *                           the same, but the session's process exits at
 *                           the client's close (the client closes at the
 *                           221, as ftpbench does): a process per session
 *                           with no work after its reply
 *   privsep-3-processes     the processes of a privilege-separated session
 *                           (twinftpd's, vsftpd's) and nothing else: the
 *                           process forked before the client (the
 *                           monitor) has forked two of its own, one that
 *                           answers until PASS (the pre-login worker) and
 *                           one that waits (the post-login worker). At
 *                           PASS the first tells the monitor and exits;
 *                           the monitor waits for its end, hands the
 *                           connection to the second, which answers 230
 *                           and then as idle-exit; the monitor ends with
 *                           it. No chroot, credentials or filters: what
 *                           the process structure costs on this machine
 *
 * Each server runs REPS times (interleaved) and prints its medians:
 *
 *   RAW login one-process 0.0621 s
 *   RAW quit process-per-session+late-exit 0.0281 s
 *
 * The client is one process: blocking for the logins, epoll for the
 * QUITs; it closes each connection at its 221, as ftpbench does. Run it in a network namespace of its own (bench/compare does).
 *
 *   rawsess serve SERVER PORT DIR [PAM_SERVICE]
 *
 * keeps one of the servers with a process per session running on
 * 127.0.0.1:PORT, answering TYPE, SIZE, PASV, RETR, STOR and DELE of
 * DIR's files as well: the floor of that process structure under
 * dkftpbench's robots (bench/robotsn --floor) and the suite's transfer
 * figures (bench/ab floor:SERVER). privsep-3-processes' worker asks its monitor
 * for each PASV socket, as twinftpd's isolated worker does;
 * privsep-3-processes+worker-pasv makes its own; privsep-3-processes+pam
 * logs its users in through PAM_SERVICE, in a child its monitor forks at
 * USER (bench/ab --pam --logins).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pamlogin.h"
#include "raw.h"
#include "src/common/util.h"

#define MAX_N 5000
#define MAX_REPS 50
#define LINE_MAX_LEN 256
#define REPLY_TIMEOUT_MS 10000	/* a reply later than this ends the run */

enum server {
	ONE_PROCESS, PER_SESSION, PER_SESSION_IDLE_EXIT, PER_SESSION_LATE_EXIT, PRIVSEP_3, SERVERS
};

static const char *const server_name[SERVERS] = {
	"one-process", "process-per-session", "process-per-session+idle-exit",
	"process-per-session+late-exit", "privsep-3-processes",
};



static void
write_all(int fd, const char *s)
{
	size_t len = strlen(s);

	while (len > 0) {
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* the peer has gone: its session ends */
		s += n;
		len -= (size_t)n;
	}
}

/* The server's answer to one command line, NULL for none. */
static const char *
answer(const char *line)
{
	if (strncasecmp(line, "USER", 4) == 0)
		return "331 Please specify the password.\r\n";
	if (strncasecmp(line, "PASS", 4) == 0)
		return "230 Login successful.\r\n";
	if (strncasecmp(line, "QUIT", 4) == 0)
		return "221 Goodbye.\r\n";
	return "500 Unknown command.\r\n";
}

/* ---- the session's own process ---- */

/*
 * serve mode (rawsess serve): the directory whose files SIZE and RETR
 * name, -1 in the timing runs; and the control connection's own address,
 * where PASV listens.
 */
static int serve_dir = -1;
/* serve privsep-3-processes+worker-pasv: the worker makes its PASV
 * sockets itself, as twinftpd's with isolate_network=NO. */
static int serve_worker_pasv;
/*
 * serve privsep-3-processes+pam: the PAM service of the logins. The
 * pre-login worker passes USER and PASS to the monitor, which forks a
 * child at USER (pam_start) and gives it the password at PASS
 * (pam_authenticate, pam_acct_mgmt), as twinftpd does; the 230 comes
 * after the child's answer and its end.
 */
static const char *serve_pam_service;

static void send_fd(int via, int fd);
static int recv_fd(int via);

/*
 * A listening socket on local's address with a port from 20000-60000 (the
 * range bench/robotsn gives every server), from a random start, with
 * SO_REUSEADDR: what the FTP servers do. The kernel's own choice (port 0)
 * would draw from the ephemeral range, which the robots' connections and
 * the TIME_WAIT of every finished transfer fill within seconds.
 */
#define PASV_LO 20000
#define PASV_SPAN 40001

static int
pasv_socket(const struct sockaddr_in *local)
{
	static unsigned state;
	struct sockaddr_in a = *local;
	unsigned i, start;

	if (state == 0)
		state = (unsigned)getpid() * 2654435761u | 1;
	state ^= state << 13;
	state ^= state >> 17;
	state ^= state << 5;
	start = state % PASV_SPAN;
	for (i = 0; i < PASV_SPAN; i++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

		if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
			raw_fail("pasv socket");
		a.sin_port = htons((uint16_t)(PASV_LO + (start + i) % PASV_SPAN));
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(s, 1) == 0)
			return s;
		if (errno != EADDRINUSE)
			raw_fail("pasv bind");
		close(s);
	}
	raw_fail("no pasv port");
}

/* A plain name of serve_dir's, "/" before it allowed (the directory is
 * the root); NULL for any other. */
static const char *
serve_name(const char *name)
{
	while (name[0] == '/')
		name++;
	if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL)
		return NULL;
	return name;
}

/* A regular file of serve_dir's, its stat in st; -1 for anything else
 * (a FIFO must not block the open: O_NONBLOCK, which files ignore). */
static int
serve_open(const char *name, int flags, struct stat *st)
{
	int f;

	name = serve_name(name);
	f = name == NULL ? -1 : openat(serve_dir, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
				       0644);
	if (f >= 0 && (fstat(f, st) != 0 || !S_ISREG(st->st_mode))) {
		close(f);
		f = -1;
	}
	return f;
}

/* The data connection of a transfer, after its 150; -1 when none came. */
static int
serve_accept(int *pasv)
{
	struct pollfd p = { .fd = *pasv, .events = POLLIN };
	int d = poll(&p, 1, REPLY_TIMEOUT_MS) == 1 ? accept4(*pasv, NULL, NULL, SOCK_CLOEXEC) : -1;

	close(*pasv);
	*pasv = -1;
	return d;
}

/* STOR in serve mode: socket -> pipe -> file by splice, as twinftpd's
 * binary uploads, through a pipe of its size (256 KB). */
static void
serve_stor(int c, int *pasv, const char *name)
{
	struct stat st;
	int f, d, p[2], ok = 0;

	if (*pasv < 0) {
		write_all(c, "425 Use PASV first.\r\n");
		return;
	}
	f = serve_open(name, O_WRONLY | O_CREAT | O_TRUNC, &st);
	if (f < 0) {
		write_all(c, "553 Could not create file.\r\n");
		return;
	}
	if (pipe2(p, O_CLOEXEC) != 0)
		raw_fail("pipe");
	(void)fcntl(p[1], F_SETPIPE_SZ, 256 * 1024);
	write_all(c, "150 Ok to send data.\r\n");
	d = serve_accept(pasv);
	if (d < 0) {
		close(p[0]);
		close(p[1]);
		close(f);
		write_all(c, "425 Failed to establish connection.\r\n");
		return;
	}
	for (;;) {
		ssize_t n = splice(d, NULL, p[1], NULL, 256 * 1024, SPLICE_F_MOVE);

		if (n <= 0) {
			ok = n == 0;
			break;
		}
		while (n > 0) {
			ssize_t m = splice(p[0], NULL, f, NULL, (size_t)n, SPLICE_F_MOVE);

			if (m <= 0)
				break;
			n -= m;
		}
		if (n > 0)
			break;
	}
	close(d);
	close(p[0]);
	close(p[1]);
	ok = close(f) == 0 && ok;
	write_all(c, ok ? "226 Transfer complete.\r\n" : "426 Failure reading network stream.\r\n");
}

/* RETR in serve mode: the whole file on the PASV socket's connection. */
static void
serve_retr(int c, int *pasv, const char *name)
{
	struct stat st;
	off_t off = 0;
	int f, d;

	if (*pasv < 0) {
		write_all(c, "425 Use PASV first.\r\n");
		return;
	}
	f = serve_open(name, O_RDONLY, &st);
	if (f < 0) {
		write_all(c, "550 Failed to open file.\r\n");
		return;
	}
	write_all(c, "150 Opening BINARY mode data connection.\r\n");
	d = serve_accept(pasv);
	if (d < 0) {
		close(f);
		write_all(c, "425 Failed to establish connection.\r\n");
		return;
	}
	/* Blocking (accept4 without SOCK_NONBLOCK): one sendfile loop, as a
	 * simple server sends. */
	while (off < st.st_size && sendfile(d, f, &off, (size_t)(st.st_size - off)) > 0)
		;
	close(d);
	close(f);
	write_all(c, off == st.st_size ? "226 Transfer complete.\r\n"
				       : "426 Failure writing network stream.\r\n");
}

/* TYPE, SIZE, PASV, RETR, STOR and DELE in serve mode: 1 if line was one
 * of them. */
static int
serve_command(int c, char *line, int ask, int *pasv)
{
	char msg[LINE_MAX_LEN];

	if (serve_dir < 0)
		return 0;
	if (strncasecmp(line, "TYPE ", 5) == 0) {
		write_all(c, "200 Switching to Binary mode.\r\n");
	} else if (strncasecmp(line, "SIZE ", 5) == 0) {
		struct stat st;
		int f = serve_open(line + 5, O_RDONLY, &st);

		if (f >= 0)
			snprintf(msg, sizeof(msg), "213 %lld\r\n", (long long)st.st_size);
		else
			snprintf(msg, sizeof(msg), "550 Could not get file size.\r\n");
		if (f >= 0)
			close(f);
		write_all(c, msg);
	} else if (strncasecmp(line, "PASV", 4) == 0) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		unsigned char *ip = (unsigned char *)&a.sin_addr, *pt = (unsigned char *)&a.sin_port;

		if (*pasv >= 0)
			close(*pasv);
		if (ask >= 0 && !serve_worker_pasv) {
			/* privsep-3: the monitor makes it (as twinftpd's
			 * isolate_network and vsftpd's privileged helper). */
			(void)!write(ask, "P", 1);
			*pasv = recv_fd(ask);
		} else {
			if (getsockname(c, (struct sockaddr *)&a, &len) != 0)
				_exit(1);
			*pasv = pasv_socket(&a);
		}
		len = sizeof(a);
		if (getsockname(*pasv, (struct sockaddr *)&a, &len) != 0)
			_exit(1);
		snprintf(msg, sizeof(msg), "227 Entering Passive Mode (%u,%u,%u,%u,%u,%u).\r\n",
			 ip[0], ip[1], ip[2], ip[3], pt[0], pt[1]);
		write_all(c, msg);
	} else if (strncasecmp(line, "RETR ", 5) == 0) {
		serve_retr(c, pasv, line + 5);
	} else if (strncasecmp(line, "STOR ", 5) == 0) {
		serve_stor(c, pasv, line + 5);
	} else if (strncasecmp(line, "DELE ", 5) == 0) {
		const char *name = serve_name(line + 5);

		write_all(c, name != NULL && unlinkat(serve_dir, name, 0) == 0
			     ? "250 Delete operation successful.\r\n" : "550 Delete operation failed.\r\n");
	} else {
		return 0;
	}
	return 1;
}

/*
 * Answers c's commands after first. With mon >= 0 (privsep-3-processes'
 * pre-login worker) a PASS gets no reply: one byte to the monitor on mon,
 * and the end. What was read past that line is lost: the client waits for
 * the 230, as ftpbench's and this file's do. ask >= 0 (privsep-3's
 * post-login worker, serve mode): the monitor's socket, asked for each
 * PASV socket.
 */
static void __attribute__((noreturn))
session(int c, enum server srv, const char *first, int mon, int ask)
{
	char buf[LINE_MAX_LEN];
	size_t have = 0;
	int pasv = -1, one = 1;

	/* RETR's 150 and 226 are two writes with no command between: with
	 * Nagle's algorithm the 226 would wait for the client's delayed ACK
	 * of the 150. Every FTP server of the comparison sets it. */
	if (serve_dir >= 0)
		(void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	write_all(c, first);
	for (;;) {
		ssize_t n = read(c, buf + have, sizeof(buf) - 1 - have);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strstr(buf, "\r\n")) != NULL) {
			int quit = strncasecmp(buf, "QUIT", 4) == 0;

			if (mon >= 0 && strncasecmp(buf, "PASS", 4) == 0) {
				if (serve_pam_service != NULL)
					(void)!write(mon, buf, (size_t)(nl + 2 - buf));
				else
					(void)!write(mon, "L", 1);
				_exit(0);
			}
			*nl = '\0';
			if (!serve_command(c, buf, ask, &pasv))
				write_all(c, answer(buf));
			/* After the 331, as twinftpd's worker asks ahead. */
			if (mon >= 0 && serve_pam_service != NULL && strncasecmp(buf, "USER ", 5) == 0) {
				*nl = '\r';
				(void)!write(mon, buf, (size_t)(nl + 2 - buf));
			}
			have -= (size_t)(nl + 2 - buf);
			memmove(buf, nl + 2, have + 1);
			if (quit && (srv == PER_SESSION_IDLE_EXIT || srv == PRIVSEP_3)) {
				struct sched_param sp = { .sched_priority = 0 };

				(void)sched_setscheduler(0, SCHED_IDLE, &sp);
				(void)poll(NULL, 0, TW_IDLE_NAP_MS);
			}
			if (quit && srv != PER_SESSION_LATE_EXIT)
				_exit(0);
		}
		if (have == sizeof(buf) - 1)
			_exit(0);	/* a line too long: the end */
	}
}

static void
send_fd(int via, int fd)
{
	char byte = 'c', ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;

	memset(ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(via, &m, MSG_NOSIGNAL) != 1)
		raw_fail("sendmsg");
}

static int
recv_fd(int via)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(via, &m, MSG_CMSG_CLOEXEC) != 1)
		_exit(0);	/* the listener has gone before a client came */
	cm = CMSG_FIRSTHDR(&m);
	if (cm == NULL || cm->cmsg_type != SCM_RIGHTS)
		_exit(1);
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Forks one of the monitor's two; returns the monitor's end of its socket. */
static int
privsep_child(int via, int other, int prelogin, pid_t *pid)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		raw_fail("socketpair");
	*pid = fork();
	if (*pid < 0)
		raw_fail("fork");
	if (*pid == 0) {
		close(via);
		if (other >= 0)
			close(other);
		close(sp[0]);
		session(recv_fd(sp[1]), PRIVSEP_3,
			prelogin ? "220 rawsess\r\n" : "230 Login successful.\r\n",
			prelogin ? sp[1] : -1, prelogin ? -1 : sp[1]);
	}
	close(sp[1]);
	return sp[0];
}

/* One "USER name" or "PASS word" line from the pre-login worker, without
 * its CRLF; 0 at its end or a line too long. */
static int
pam_line(int fd, char *line, size_t size)
{
	size_t have = 0;

	while (have + 1 < size && read(fd, line + have, 1) == 1) {
		if (have > 0 && line[have - 1] == '\r' && line[have] == '\n') {
			line[have - 1] = '\0';
			return 1;
		}
		have++;
	}
	return 0;
}

/*
 * The PAM child, forked at USER: pam_start, then the password from its
 * pipe, pam_authenticate and pam_acct_mgmt, one byte of answer, the end.
 */
static pid_t
pam_child(const char *user, int *pw_to, int *answer_from)
{
	int pw[2], ans[2];
	pid_t pid;

	if (pipe2(pw, O_CLOEXEC) != 0 || pipe2(ans, O_CLOEXEC) != 0)
		raw_fail("pipe");
	pid = fork();
	if (pid < 0)
		raw_fail("fork");
	if (pid == 0) {
		char word[LINE_MAX_LEN];
		pam_handle_t *ph;
		ssize_t n;

		/* Its own copy of the write end would keep its read from
		 * ever seeing the monitor's close. */
		close(pw[1]);
		close(ans[0]);
		ph = pam_login_start(serve_pam_service, user);
		n = read(pw[0], word, sizeof(word) - 1);

		word[n > 0 ? n : 0] = '\0';
		(void)!write(ans[1], ph != NULL && n > 0 &&
			     pam_login_finish(ph, word) == PAM_SUCCESS ? "1" : "0", 1);
		_exit(0);
	}
	close(pw[0]);
	close(ans[1]);
	*pw_to = pw[1];
	*answer_from = ans[0];
	return pid;
}

/* +pam: the monitor's part of the login; 1 when PAM let it in. */
static int
pam_monitor_login(int pre_fd)
{
	char line[LINE_MAX_LEN], ok = '0';
	int pw_to = -1, answer_from = -1;
	pid_t child = -1;

	while (pam_line(pre_fd, line, sizeof(line))) {
		if (strncasecmp(line, "USER ", 5) == 0) {
			if (child > 0) {
				kill(child, SIGKILL);
				close(pw_to);
				close(answer_from);
				pw_to = -1;
				while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
					;
			}
			child = pam_child(line + 5, &pw_to, &answer_from);
		} else if (strncasecmp(line, "PASS ", 5) == 0 && child > 0) {
			/* The close ends the child's read, an empty
			 * password too. */
			(void)!write(pw_to, line + 5, strlen(line + 5));
			close(pw_to);
			pw_to = -1;
			if (read(answer_from, &ok, 1) != 1)
				ok = '0';
			break;
		} else {
			break;
		}
	}
	if (child > 0) {
		if (pw_to >= 0)
			close(pw_to);
		close(answer_from);
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return ok == '1';
}

/* privsep-3-processes: the monitor, forked before its client, with its
 * two children forked before the client too (as a ready pair). */
static void __attribute__((noreturn))
privsep_monitor(int via)
{
	pid_t pre, post;
	int pre_fd, post_fd, c, pass;
	char byte;

	/* The listener ignores SIGCHLD (no zombies); the monitor waits. */
	signal(SIGCHLD, SIG_DFL);
	pre_fd = privsep_child(via, -1, 1, &pre);
	post_fd = privsep_child(via, pre_fd, 0, &post);
	c = recv_fd(via);
	close(via);
	send_fd(pre_fd, c);
	/* PASS, or the client gone: either way the pre-login worker ends,
	 * and the post-login one may touch the connection only after. */
	pass = serve_pam_service != NULL ? pam_monitor_login(pre_fd) : read(pre_fd, &byte, 1) == 1;
	while (waitpid(pre, NULL, 0) < 0 && errno == EINTR)
		;
	if (!pass)
		_exit(0);
	send_fd(post_fd, c);
	if (serve_dir >= 0) {
		struct sockaddr_in local;
		socklen_t len = sizeof(local);

		if (getsockname(c, (struct sockaddr *)&local, &len) != 0)
			_exit(1);
		/* Each byte from the worker asks for a PASV socket; its end
		 * (the session's) closes the socket. */
		while (read(post_fd, &byte, 1) == 1) {
			int s = pasv_socket(&local);

			send_fd(post_fd, s);
			close(s);
		}
	}
	close(c);
	while (waitpid(post, NULL, 0) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* A process forked before its client; returns the listener's end of the
 * socket its client's connection will come through. */
static int
spare(int lfd, enum server srv)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		raw_fail("socketpair");
	pid = fork();
	if (pid < 0)
		raw_fail("fork");
	if (pid == 0) {
		int c;

		close(lfd);
		close(sp[0]);
		if (srv == PRIVSEP_3)
			privsep_monitor(sp[1]);
		c = recv_fd(sp[1]);
		close(sp[1]);
		session(c, srv, "220 rawsess\r\n", -1, -1);
	}
	close(sp[1]);
	return sp[0];
}

static void __attribute__((noreturn))
listener_per_session(int lfd, enum server srv)
{
	int next = spare(lfd, srv);

	/* Sessions are never waited for: no zombies. */
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			/* Out of descriptors or memory, or a connection reset
			 * in the queue: the floor stays, as a server does. */
			if (errno != EINTR)
				(void)poll(NULL, 0, 10);
			continue;
		}
		send_fd(next, c);
		close(c);
		close(next);
		next = spare(lfd, srv);
	}
}

/* ---- one process ---- */

struct conn {
	char buf[LINE_MAX_LEN];
	size_t have;
};

static void
listener_one_process(int lfd)
{
	static struct conn conns[MAX_N + 64];
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd };

	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
		raw_fail("epoll");
	for (;;) {
		struct epoll_event evs[64];
		int k = epoll_wait(ep, evs, 64, -1), i;

		for (i = 0; i < k; i++) {
			int fd = evs[i].data.fd;
			struct conn *cn;
			ssize_t n;
			char *nl;

			if (fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

				if (c < 0)
					continue;
				if (c >= (int)(sizeof(conns) / sizeof(conns[0]))) {
					close(c);
					continue;
				}
				conns[c].have = 0;
				ev.events = EPOLLIN;
				ev.data.fd = c;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev) != 0)
					raw_fail("epoll_ctl");
				write_all(c, "220 rawsess\r\n");
				continue;
			}
			cn = &conns[fd];
			n = read(fd, cn->buf + cn->have, sizeof(cn->buf) - 1 - cn->have);
			if (n <= 0 || cn->have + (size_t)n == sizeof(cn->buf) - 1) {
				close(fd);
				continue;
			}
			cn->have += (size_t)n;
			cn->buf[cn->have] = '\0';
			while ((nl = strstr(cn->buf, "\r\n")) != NULL) {
				*nl = '\0';
				write_all(fd, answer(cn->buf));
				cn->have -= (size_t)(nl + 2 - cn->buf);
				memmove(cn->buf, nl + 2, cn->have + 1);
			}
		}
	}
}

/* ---- the client ---- */

/* Reads one reply line on a blocking socket; returns its code. */
static int
reply(int fd)
{
	char buf[LINE_MAX_LEN];
	size_t have = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		ssize_t n;

		if (poll(&p, 1, REPLY_TIMEOUT_MS) != 1) {
			fprintf(stderr, "rawsess: no reply in %d ms\n", REPLY_TIMEOUT_MS);
			exit(2);
		}
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0) {
			fprintf(stderr, "rawsess: the server closed the connection\n");
			exit(2);
		}
		have += (size_t)n;
		buf[have] = '\0';
		if (strstr(buf, "\r\n") != NULL)
			return atoi(buf);
		if (have == sizeof(buf) - 1)
			exit(2);
	}
}

static void
expect(int fd, const char *cmd, int code)
{
	if (cmd != NULL)
		write_all(fd, cmd);
	if (reply(fd) != code) {
		fprintf(stderr, "rawsess: %s: not %d\n", cmd ? cmd : "greeting", code);
		exit(2);
	}
}

static void
run(enum server srv, int n, double *t_login, double *t_quit)
{
	static int fds[MAX_N];
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, i, left, ep, status;
	double t0;
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(lfd, 1024) != 0 || getsockname(lfd, (struct sockaddr *)&a, &len) != 0)
		raw_fail("listen");
	pid = fork();
	if (pid < 0)
		raw_fail("fork");
	if (pid == 0) {
		/* The server ends with the harness, whatever ends it; its
		 * sessions end at their QUIT or their clients' close. It
		 * runs in a session of its own, as compare starts the FTP
		 * servers: with autogroups, a scheduling group apart from
		 * the client's. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
			_exit(1);
		(void)setsid();
		if (srv == ONE_PROCESS)
			listener_one_process(lfd);
		listener_per_session(lfd, srv);
	}
	close(lfd);
	usleep(100000);	/* the listener's first spare is forked */
	t0 = raw_now();
	for (i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&a, sizeof(a)) != 0)
			raw_fail("connect");
		(void)setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		expect(fds[i], NULL, 220);
		expect(fds[i], "USER anonymous\r\n", 331);
		expect(fds[i], "PASS rawsess@\r\n", 230);
	}
	*t_login = raw_now() - t0;
	usleep(200000);	/* the sessions idle, as between ftpbench's figures */

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		raw_fail("epoll");
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0)
			raw_fail("epoll_ctl");
	}
	t0 = raw_now();
	for (i = 0; i < n; i++)
		write_all(fds[i], "QUIT\r\n");
	for (left = n; left > 0;) {
		struct epoll_event evs[64];
		int k = epoll_wait(ep, evs, 64, REPLY_TIMEOUT_MS), j;

		if (k <= 0) {
			fprintf(stderr, "rawsess: %d QUITs unanswered\n", left);
			exit(2);
		}
		for (j = 0; j < k; j++) {
			int fd = fds[evs[j].data.u32];

			if (reply(fd) != 221)
				exit(2);
			close(fd);	/* at the 221, as ftpbench */
			fds[evs[j].data.u32] = -1;
			left--;
		}
	}
	*t_quit = raw_now() - t0;
	close(ep);
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		raw_fail("waitpid");
	usleep(300000);	/* the sessions' exits, before the next run */
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void
usage(void)
{
	fprintf(stderr, "usage: rawsess N [-r REPS]   (1 <= N <= %d)\n"
		"       rawsess serve SERVER PORT DIR [PAM_SERVICE]\n", MAX_N);
	exit(2);
}

/*
 * rawsess serve: one of the servers with a process per session, kept
 * running on 127.0.0.1:PORT, that also answers TYPE, SIZE, PASV, RETR,
 * STOR and DELE of DIR's files (anyone's USER and PASS log in; the
 * commands are answered before a login too). Ends at SIGTERM; each
 * session ends with its client.
 */
static void __attribute__((noreturn))
serve(const char *name, const char *port, const char *dir, const char *pam_service)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int s, lfd, one = 1;

	if (strcmp(name, "privsep-3-processes+worker-pasv") == 0) {
		serve_worker_pasv = 1;
		name = server_name[PRIVSEP_3];
	} else if (strcmp(name, "privsep-3-processes+pam") == 0) {
		if (pam_service == NULL)
			usage();
		serve_pam_service = pam_service;
		name = server_name[PRIVSEP_3];
	}
	if (pam_service != NULL && serve_pam_service == NULL)
		usage();
	for (s = PER_SESSION; s < SERVERS; s++)
		if (strcmp(name, server_name[s]) == 0)
			break;
	if (s == SERVERS || atoi(port) < 1 || atoi(port) > 65535)
		usage();
	/* A client that resets its data connection ends a send with EPIPE,
	 * not its session. */
	signal(SIGPIPE, SIG_IGN);
	serve_dir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (serve_dir < 0)
		raw_fail(dir);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)atoi(port));
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 1024) != 0)
		raw_fail("listen");
	listener_per_session(lfd, (enum server)s);
}

int
main(int argc, char **argv)
{
	static double login[SERVERS][MAX_REPS], quit[SERVERS][MAX_REPS];
	int n, reps = 3, r, s;

	if ((argc == 5 || argc == 6) && strcmp(argv[1], "serve") == 0)
		serve(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	if (argc != 2 && !(argc == 4 && strcmp(argv[2], "-r") == 0))
		usage();
	n = atoi(argv[1]);
	if (argc == 4)
		reps = atoi(argv[3]);
	if (n < 1 || n > MAX_N || reps < 1 || reps > MAX_REPS)
		usage();
	for (r = 0; r < reps; r++)
		for (s = 0; s < SERVERS; s++)
			run((enum server)s, n, &login[s][r], &quit[s][r]);
	for (s = 0; s < SERVERS; s++) {
		qsort(login[s], (size_t)reps, sizeof(double), cmp_double);
		qsort(quit[s], (size_t)reps, sizeof(double), cmp_double);
		printf("RAW login %s %.4f s\n", server_name[s], login[s][reps / 2]);
		printf("RAW quit %s %.4f s\n", server_name[s], quit[s][reps / 2]);
	}
	return 0;
}
