/*
 * rawlimit: what one TCP stream on loopback moves with no FTP server in
 * the way, the limit bench/compare puts beside the RETR and STOR figures.
 *
 *   rawlimit retr FILE [-r REPS]      a sendfile(2) sender, a reader that
 *                                     discards (recv MSG_TRUNC, 1 MiB, non-
 *                                     blocking with poll, as ftpbench); as
 *                                     ftpbench's RETR figure, a run is
 *                                     fetches of FILE for about RETR_SECS,
 *                                     each on a connection made before it
 *                                     and timed from the reader's request
 *                                     (one byte) to the end of file
 *   rawlimit stor DIR SIZE [-r REPS]  a sender of SIZE bytes, a receiver
 *                                     that writes a file in DIR: recv+write,
 *                                     and splice socket -> pipe -> file
 *   rawlimit stor DIR SECSs [-r REPS] the sender sends for SECS seconds
 *                                     ("1s"), as ftpbench's STOR figure
 *                                     does: the file then grows to what a
 *                                     second moves (gigabytes), and the
 *                                     page cache's writeback of it is in
 *                                     the figure, as it is in the FTP one
 *
 * The STOR sender sends from a 1 MiB buffer in its memory (send(2)), as
 * ftpbench's STOR and FTP clients do: on two cores the sender's copy
 * competes with the receiver, so a limit measured with a cheaper sender
 * would not be the limit of the FTP figure beside it. splice+zc-sender
 * is the splice receiver fed by sendfile(2) from a file instead (what
 * this tool measured as "splice" before), for reference.
 *
 * Each variant (socket options of the sending side for retr, the
 * receiver's copy for stor) runs REPS times, interleaved, and prints its
 * median (sendfile+nodelay is how twinftpd sent before TCP_CORK; +lowat
 * adds its TCP_NOTSENT_LOWAT), as MB/s (10^6 bytes): for retr over the
 * fetches' timed parts, for stor from connect to the file closed:
 *
 *   RAW retr sendfile+cork 4812.3 MB/s
 *   RAW stor-1s splice 2011.0 MB/s
 *
 * The two ends are two processes, as a server and a client are.
 *
 * The limit under the suite's N-at-once figures (300 x RETR, 300 x STOR
 * of one file and of distinct files), with a process per connection on
 * the server side as every server measured but pyftpdlib has:
 *
 *   rawlimit mretr FILE N [-r REPS]     N senders of FILE (blocking
 *                                       sendfile; and twinftpd's cork,
 *                                       lowat and non-blocking), one
 *                                       reader of all N at once (epoll,
 *                                       MSG_TRUNC, as ftpbench)
 *   rawlimit mstor DIR SIZE N [-r REPS] one sender of SIZE bytes from
 *                                       memory on each of N connections at
 *                                       once (epoll, as ftpbench), N
 *                                       receivers (recv+write, splice)
 *                                       each writing a file of its own
 *                                       (mstor-N-distinct) or all the same
 *                                       file, opened with O_TRUNC
 *                                       (mstor-N-one); and splice to
 *                                       distinct files again after a wait
 *                                       of SECS (-w, 10 by default:
 *                                       mstor-N-distinct-cold)
 *
 * The distinct runs write N x SIZE bytes into pages the run before has
 * just freed, at most the recv+write run's. On a virtual machine that
 * gives freed memory back to its host (virtio-balloon free page
 * reporting, as the machines of bench/RESULTS.md do) a page the host has
 * taken back costs a fault on the host at its next first write: 3 GB
 * took 2.9-3.1 s to splice into files after a 10 s wait, against
 * 0.9-1.5 s at once (stop 32). An FTP server's files in the suite take
 * such pages (the earlier figures' files are kept until its end):
 * -distinct-cold is that case, -distinct the best case.
 *
 * The N processes, their connections and (mstor) their open files are
 * all there before the clock starts, which runs from the first request
 * (a byte, for mretr) or the first byte sent (mstor) to the last
 * connection's end of file (a receiver closes its connection once its
 * file is closed). The FTP figures also hold each client's commands
 * (TYPE, PASV, the data connection, RETR or STOR, 226): 0.1 s of 300 x
 * RETR's 0.6 s in stop 31's phases. Prints seconds:
 *
 *   RAW mretr-300 sendfile+cork+lowat+nonblock 0.4120 secs
 *   RAW mstor-300-distinct splice 2.6100 secs
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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

#include "raw.h"

#define MIB (1024 * 1024)
#define MAX_REPS 50
#define PIPE_SIZE MIB		/* fcntl F_SETPIPE_SZ: at most pipe-max-size (1 MiB) */
#define NOTSENT_LOWAT (128 * 1024)	/* twinftpd's on data connections */

enum variant {
	RETR_PLAIN, RETR_NODELAY, RETR_CORK, RETR_CORK_LOWAT, RETR_CORK_LOWAT_NB,
	STOR_RECV, STOR_SPLICE, STOR_SPLICE_ZC,
	VARIANTS
};

static const char *const variant_name[VARIANTS] = {
	"sendfile", "sendfile+nodelay", "sendfile+cork", "sendfile+cork+lowat",
	"sendfile+cork+lowat+nonblock",
	"recv+write", "splice", "splice+zc-sender",
};



static int
listen_n(struct sockaddr_in *a, int backlog)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 ||
	    listen(fd, backlog) != 0 || getsockname(fd, (struct sockaddr *)a, &len) != 0)
		raw_fail("listen");
	return fd;
}

static int
listen_any(struct sockaddr_in *a)
{
	return listen_n(a, 1);
}

static void
setopt(int fd, int opt, int val)
{
	if (setsockopt(fd, IPPROTO_TCP, opt, &val, sizeof(val)) != 0)
		raw_fail("setsockopt");
}

/* Waits until sock is ready for events (a non-blocking end's EAGAIN). */
static void
wait_for(int sock, short events)
{
	struct pollfd pfd = { .fd = sock, .events = events };

	(void)poll(&pfd, 1, -1);
}

/* A socket connected to a. */
static int
connect_to(const struct sockaddr_in *a)
{
	int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (sock < 0 || connect(sock, (const struct sockaddr *)a, sizeof(*a)) != 0)
		raw_fail("connect");
	return sock;
}

/* Exits 2 unless variant v's transfer moved all size bytes. */
static void
check_moved(enum variant v, off_t got, off_t size)
{
	if (got != size) {
		fprintf(stderr, "rawlimit: %s moved %lld of %lld bytes\n", variant_name[v],
			(long long)got, (long long)size);
		exit(2);
	}
}

/*
 * The STOR sender's buffer, filled before the senders fork: a warm
 * buffer, as in a client that has sent before (the first touch of 1 MiB,
 * 256 page faults, is a millisecond here, a fifth of a 10 MB upload).
 */
static char mem_block[MIB];

/* SECSs: the STOR senders send for this long instead of SIZE bytes. */
static double send_secs;

/* The STOR sender of an FTP client: size bytes (or send_secs) from memory. */
static void
send_mem(int sock, off_t size)
{
	off_t left = size;
	double end = raw_now() + send_secs;

	while (send_secs > 0 ? raw_now() < end : left > 0) {
		ssize_t n = send(sock, mem_block, send_secs > 0 || left >= MIB ? MIB : (size_t)left,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			raw_fail("send");
		left -= n;
	}
}

/* The sending side: the whole file in blocking sendfile calls (with
 * send_secs, the file again and again for that long). */
static void
send_all(int sock, int file, off_t size, enum variant v)
{
	off_t off = 0;
	double end = raw_now() + send_secs;
	int cork = v == RETR_CORK || v == RETR_CORK_LOWAT || v == RETR_CORK_LOWAT_NB;

	if (v == RETR_NODELAY)
		setopt(sock, TCP_NODELAY, 1);
	if (v == RETR_CORK_LOWAT || v == RETR_CORK_LOWAT_NB)
		setopt(sock, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT);
	if (cork)
		setopt(sock, TCP_CORK, 1);
	if (v == RETR_CORK_LOWAT_NB && fcntl(sock, F_SETFL, O_NONBLOCK) != 0)
		raw_fail("fcntl");
	while (off < size) {
		ssize_t n = sendfile(sock, file, &off, (size_t)(size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			wait_for(sock, POLLOUT);
			continue;
		}
		if (n <= 0)
			raw_fail("sendfile");
		if (off == size && send_secs > 0 && raw_now() < end)
			off = 0;
	}
	if (cork)
		setopt(sock, TCP_CORK, 0);
}

/* recv(2) until EOF, into out, or discarded (MSG_TRUNC) with out -1. */
static off_t
recv_write(int sock, int out)
{
	static char buf[MIB];
	off_t got = 0;

	for (;;) {
		ssize_t n = recv(sock, buf, sizeof(buf), out < 0 ? MSG_TRUNC | MSG_DONTWAIT : 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			wait_for(sock, POLLIN);
			continue;
		}
		if (n < 0)
			raw_fail("recv");
		if (n == 0)
			return got;
		if (out >= 0 && write(out, buf, (size_t)n) != n)
			raw_fail("write");
		got += n;
	}
}

static off_t
recv_splice(int sock, int out)
{
	int p[2];
	off_t got = 0;

	if (pipe2(p, O_CLOEXEC) != 0)
		raw_fail("pipe2");
	(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
	for (;;) {
		ssize_t n = splice(sock, NULL, p[1], NULL, PIPE_SIZE, SPLICE_F_MOVE), m;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			raw_fail("splice in");
		if (n == 0)
			break;
		got += n;
		while (n > 0) {
			m = splice(p[0], NULL, out, NULL, (size_t)n, SPLICE_F_MOVE);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				raw_fail("splice out");
			n -= m;
		}
	}
	close(p[0]);
	close(p[1]);
	return got;
}

#define RETR_SECS 0.5		/* of timed fetches in one run */
#define RETR_MAX_FETCHES 500	/* and at most this many (TIME_WAIT sockets) */

/* Fetches of file (size bytes) with variant v's sender; returns MB/s. */
static double
run_retr(enum variant v, int file, off_t size)
{
	struct sockaddr_in a;
	int lfd = listen_any(&a), sock, status, n = 0;
	double timed = 0;
	pid_t pid = fork();

	if (pid < 0)
		raw_fail("fork");
	if (pid == 0) {
		for (;;) {
			char go;
			int c = accept(lfd, NULL, NULL);

			if (c < 0)
				raw_fail("accept");
			if (recv(c, &go, 1, 0) != 1)
				_exit(0);	/* a connection with no request: the end */
			send_all(c, file, size, v);
			close(c);
		}
	}
	close(lfd);
	while (timed < RETR_SECS && n < RETR_MAX_FETCHES) {
		double t0;
		off_t got;

		sock = connect_to(&a);
		t0 = raw_now();
		if (send(sock, "g", 1, MSG_NOSIGNAL) != 1)
			raw_fail("send");
		got = recv_write(sock, -1);
		timed += raw_now() - t0;
		close(sock);
		check_moved(v, got, size);
		n++;
	}
	close(connect_to(&a));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		exit(2);
	return (double)size * n / 1e6 / timed;
}

/* One upload of size bytes (or send_secs); returns MB/s. */
static double
run_once(enum variant v, int file, off_t size, const char *out_path)
{
	struct sockaddr_in a;
	int lfd = listen_any(&a), sock, out = -1, status;
	double t0, t;
	off_t got;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		raw_fail("fork");
	if (pid == 0) {
		int c = accept(lfd, NULL, NULL);

		if (c < 0)
			raw_fail("accept");
		if (v == STOR_RECV || v == STOR_SPLICE)
			send_mem(c, size);
		else
			send_all(c, file, size, v < STOR_RECV ? v : RETR_PLAIN);
		close(c);
		_exit(0);
	}
	close(lfd);
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (out_path != NULL) {
		out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (out < 0)
			raw_fail(out_path);
	}
	t0 = raw_now();
	if (sock < 0 || connect(sock, (struct sockaddr *)&a, sizeof(a)) != 0)
		raw_fail("connect");
	if (v == STOR_SPLICE || v == STOR_SPLICE_ZC)
		got = recv_splice(sock, out);
	else
		got = recv_write(sock, out);
	if (out >= 0 && close(out) != 0)
		raw_fail("close");
	t = raw_now() - t0;
	close(sock);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		exit(2);
	if (send_secs > 0 && got > 0)
		size = got;
	check_moved(v, got, size);
	return (double)size / 1e6 / t;
}

/*
 * The N-at-once runs (mretr, mstor): N server processes, each accepting
 * one connection; one client process driving all N connections.
 */
#define MULTI_MAX 2000
#define MULTI_WAIT_MS 120000	/* no event for this long: a failed run */

enum multi_file { MULTI_RETR, MULTI_DISTINCT, MULTI_ONE, MULTI_DISTINCT_COLD };

/* Seconds a distinct-cold run waits first (-w). */
static unsigned cold_secs = 10;

/* What an exit of the parent removes: the files of the run in progress. */
static struct {
	pid_t parent;
	const char *dir;	/* NULL: no run writing files */
	enum multi_file mf;
	int n;
} multi_files;

/* The path of file i of a run writing files in dir. */
static void
multi_path(char *buf, size_t len, const char *dir, enum multi_file mf, int i)
{
	if (mf == MULTI_DISTINCT || mf == MULTI_DISTINCT_COLD)
		snprintf(buf, len, "%s/rawlimit.m.%d.%d", dir, (int)multi_files.parent, i);
	else
		snprintf(buf, len, "%s/rawlimit.one.%d", dir, (int)multi_files.parent);
}

/* atexit: the parent, on any exit (a failed run's too), removes its files. */
static void
multi_unlink(void)
{
	char path[4096];
	int i;

	if (getpid() != multi_files.parent || multi_files.dir == NULL)
		return;
	for (i = 0; i < (multi_files.mf == MULTI_ONE ? 1 : multi_files.n); i++) {
		multi_path(path, sizeof(path), multi_files.dir, multi_files.mf, i);
		unlink(path);
	}
}

/*
 * One server process of a multi run, on its accepted connection c: one
 * byte on ready once the connection (and for mstor its file) is there.
 */
static void __attribute__((noreturn))
multi_server(enum variant v, enum multi_file mf, int c, int ready, int file, off_t size,
	     const char *path)
{
	char go;
	int out = -1;
	off_t got;

	if (mf != MULTI_RETR) {
		out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (out < 0)
			raw_fail(path);
	}
	if (write(ready, "r", 1) != 1)
		raw_fail("ready");
	if (mf == MULTI_RETR) {
		if (recv(c, &go, 1, 0) != 1)
			raw_fail("recv request");
		send_all(c, file, size, v);
	} else {
		got = v == STOR_SPLICE ? recv_splice(c, out) : recv_write(c, out);
		if (close(out) != 0)
			raw_fail("close");
		check_moved(v, got, size);
	}
	close(c);
	_exit(0);
}

/*
 * The client of a multi run over socks[0..n): for mretr a request byte
 * on each, then each read to its end (MSG_TRUNC); for mstor size bytes
 * sent on each from mem_block, then its end of file awaited. Returns the
 * seconds from the first request or byte to the last end of file; exits
 * 2 on a failure (the parent's atexit removes the files, and the servers
 * die with it: PR_SET_PDEATHSIG).
 */
static double
multi_client(const int *socks, int n, off_t size, int stor)
{
	static off_t moved[MULTI_MAX];
	static char sink[MIB];
	int ep = epoll_create1(EPOLL_CLOEXEC), left = n, i;
	double t0;

	if (ep < 0)
		raw_fail("epoll_create1");
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN | (stor ? EPOLLOUT : 0),
					  .data.u32 = (uint32_t)i };

		moved[i] = 0;
		if (fcntl(socks[i], F_SETFL, O_NONBLOCK) != 0 ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, socks[i], &ev) != 0)
			raw_fail("epoll_ctl");
	}
	t0 = raw_now();
	for (i = 0; i < n && !stor; i++)
		if (send(socks[i], "g", 1, MSG_NOSIGNAL) != 1)
			raw_fail("send request");
	while (left > 0) {
		struct epoll_event evs[64];
		int k = epoll_wait(ep, evs, 64, MULTI_WAIT_MS), j;

		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			errno = ETIMEDOUT;
		if (k <= 0)
			raw_fail("epoll_wait");
		for (j = 0; j < k; j++) {
			int s = socks[evs[j].data.u32];
			off_t *m = &moved[evs[j].data.u32];
			ssize_t r;

			if (stor && *m < size && (evs[j].events & EPOLLOUT)) {
				r = send(s, mem_block, size - *m < MIB ? (size_t)(size - *m) : MIB,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
				if (r < 0 && errno != EAGAIN && errno != EINTR)
					raw_fail("send");
				if (r > 0)
					*m += r;
				if (*m == size) {
					struct epoll_event ev = { .events = EPOLLIN,
								  .data = evs[j].data };

					if (shutdown(s, SHUT_WR) != 0 ||
					    epoll_ctl(ep, EPOLL_CTL_MOD, s, &ev) != 0)
						raw_fail("shutdown");
				}
				continue;
			}
			if (!(evs[j].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
				continue;
			r = recv(s, sink, stor ? 1 : sizeof(sink),
				 MSG_DONTWAIT | (stor ? 0 : MSG_TRUNC));
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r < 0 || (r > 0 && stor))
				raw_fail("recv");
			if (r > 0) {
				*m += r;
				continue;
			}
			/* The end of file: the sender's whole file, or the
			 * receiver's file closed. */
			if (*m != size) {
				fprintf(stderr, "rawlimit: a connection ended after %lld of %lld "
					"bytes\n", (long long)*m, (long long)size);
				exit(2);
			}
			if (epoll_ctl(ep, EPOLL_CTL_DEL, s, NULL) != 0)
				raw_fail("epoll_ctl");
			left--;
		}
	}
	close(ep);
	return raw_now() - t0;
}

/*
 * One multi run of n connections with server variant v; returns seconds.
 * The clock starts once every server process has its connection (and
 * its file open): each says so on the ready pipe.
 */
static double
run_multi(enum variant v, enum multi_file mf, int n, int file, off_t size, const char *dir)
{
	static pid_t pids[MULTI_MAX];
	static int socks[MULTI_MAX];
	struct sockaddr_in a;
	char path[4096] = "";
	int lfd, ready[2], i, got = 0, status, bad = 0;
	double t;

	/* The memory the run before freed goes back to the host meanwhile
	 * (free page reporting): this run's files take pages the machine
	 * has not touched for a while, as a server's do in the suite. */
	if (mf == MULTI_DISTINCT_COLD)
		sleep(cold_secs);
	lfd = listen_n(&a, n);
	if (pipe2(ready, O_CLOEXEC) != 0)
		raw_fail("pipe2");
	multi_files.dir = mf == MULTI_RETR ? NULL : dir;
	multi_files.mf = mf;
	multi_files.n = n;
	for (i = 0; i < n; i++) {
		if (mf != MULTI_RETR)
			multi_path(path, sizeof(path), dir, mf, i);
		pids[i] = fork();
		if (pids[i] < 0)
			raw_fail("fork");
		if (pids[i] == 0) {
			int c;

			/* A parent that fails takes its servers with it. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
			    getppid() != multi_files.parent)
				_exit(2);
			c = accept(lfd, NULL, NULL);
			if (c < 0)
				raw_fail("accept");
			close(lfd);
			close(ready[0]);
			multi_server(v, mf, c, ready[1], file, size, path);
		}
	}
	close(lfd);
	close(ready[1]);
	for (i = 0; i < n; i++)
		socks[i] = connect_to(&a);
	while (got < n) {
		struct pollfd pfd = { .fd = ready[0], .events = POLLIN };
		char buf[256];
		ssize_t r;

		/* A server that failed never says ready (the others still
		 * hold the pipe open): bounded. */
		if (poll(&pfd, 1, MULTI_WAIT_MS) == 0) {
			errno = ETIMEDOUT;
			raw_fail("the server processes' ready");
		}
		r = read(ready[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			raw_fail("the server processes' ready");
		if (r == 0) {
			fprintf(stderr, "rawlimit: %d of %d server processes failed before the "
				"run\n", n - got, n);
			exit(2);
		}
		got += (int)r;
	}
	close(ready[0]);
	t = multi_client(socks, n, size, mf != MULTI_RETR);
	for (i = 0; i < n; i++) {
		close(socks[i]);
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			bad = 1;
	}
	multi_unlink();
	multi_files.dir = NULL;
	if (bad)
		exit(2);
	return t;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
run(int first, int last, int file, off_t size, const char *out, int reps)
{
	double r[VARIANTS][MAX_REPS];
	int i, v;

	for (i = 0; i < reps; i++)
		for (v = first; v <= last; v++)
			r[v][i] = v < STOR_RECV ? run_retr((enum variant)v, file, size)
				: run_once((enum variant)v, file, size, out);
	for (v = first; v <= last; v++) {
		qsort(r[v], (size_t)reps, sizeof(double), cmp_double);
		if (v >= STOR_RECV && send_secs > 0)
			printf("RAW stor-%gs %s %.1f MB/s\n", send_secs, variant_name[v],
			       r[v][reps / 2]);
		else
			printf("RAW %s %s %.1f MB/s\n", v < STOR_RECV ? "retr" : "stor",
			       variant_name[v], r[v][reps / 2]);
	}
}

/* The multi runs of each (variant, file) pair, interleaved; their medians. */
static void
run_multis(const enum variant *vs, const enum multi_file *mfs, int pairs, int n, int file,
	   off_t size, const char *dir, int reps)
{
	static const char *const mf_name[] = { "", "-distinct", "-one", "-distinct-cold" };
	double r[5][MAX_REPS];
	struct rlimit rl;
	int i, k;

	/* The client holds n sockets at once: the soft fd limit goes to the
	 * hard one, and an n beyond it is refused before any fork. */
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		raw_fail("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < (rlim_t)n + 64) {
		fprintf(stderr, "rawlimit: %d connections need more open files than the limit "
			"(%llu)\n", n, (unsigned long long)rl.rlim_cur);
		exit(2);
	}
	multi_files.parent = getpid();
	if (atexit(multi_unlink) != 0)
		raw_fail("atexit");
	for (i = 0; i < reps; i++)
		for (k = 0; k < pairs; k++)
			r[k][i] = run_multi(vs[k], mfs[k], n, file, size, dir);
	for (k = 0; k < pairs; k++) {
		qsort(r[k], (size_t)reps, sizeof(double), cmp_double);
		printf("RAW m%s-%d%s %s %.4f secs\n", mfs[k] == MULTI_RETR ? "retr" : "stor", n,
		       mf_name[mfs[k]], variant_name[vs[k]], r[k][reps / 2]);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: rawlimit retr FILE [-r REPS]\n"
		"       rawlimit stor DIR SIZE|SECSs [-r REPS]\n"
		"       rawlimit mretr FILE N [-r REPS]\n"
		"       rawlimit mstor DIR SIZE N [-r REPS] [-w SECS]\n");
	exit(2);
}

/* "10M", "65537", "1G": bytes. */
static off_t
parse_size(const char *s)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 10);

	if (end == s)
		usage();
	if (*end == 'K' || *end == 'k')
		n *= 1024ULL;
	else if (*end == 'M' || *end == 'm')
		n *= (unsigned long long)MIB;
	else if (*end == 'G' || *end == 'g')
		n *= 1024ULL * MIB;
	return (off_t)n;
}

int
main(int argc, char **argv)
{
	int reps = 5, file, nargs, i;
	struct stat st;

	if (argc < 3)
		usage();
	nargs = strcmp(argv[1], "mstor") == 0 ? 5 :
		strcmp(argv[1], "stor") == 0 || strcmp(argv[1], "mretr") == 0 ? 4 : 3;
	if (argc < nargs || (argc - nargs) % 2 != 0)
		usage();
	for (i = nargs; i < argc; i += 2) {
		if (strcmp(argv[i], "-r") == 0)
			reps = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-w") == 0 && strcmp(argv[1], "mstor") == 0)
			cold_secs = (unsigned)atoi(argv[i + 1]);
		else
			usage();
	}
	if (cold_secs > 600)
		usage();
	if (reps < 1 || reps > MAX_REPS)
		usage();
	if (strcmp(argv[1], "retr") == 0) {
		file = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (file < 0 || fstat(file, &st) != 0)
			raw_fail(argv[2]);
		run(RETR_PLAIN, RETR_CORK_LOWAT_NB, file, st.st_size, NULL, reps);
	} else if (strcmp(argv[1], "mretr") == 0) {
		static const enum variant vs[] = { RETR_PLAIN, RETR_CORK_LOWAT_NB };
		static const enum multi_file mfs[] = { MULTI_RETR, MULTI_RETR };
		int n = atoi(argv[3]);

		if (n < 1 || n > MULTI_MAX)
			usage();
		file = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (file < 0 || fstat(file, &st) != 0)
			raw_fail(argv[2]);
		run_multis(vs, mfs, 2, n, file, st.st_size, NULL, reps);
	} else if (strcmp(argv[1], "mstor") == 0) {
		static const enum variant vs[] = { STOR_RECV, STOR_SPLICE, STOR_RECV, STOR_SPLICE,
						   STOR_SPLICE };
		static const enum multi_file mfs[] = { MULTI_ONE, MULTI_ONE, MULTI_DISTINCT,
						       MULTI_DISTINCT, MULTI_DISTINCT_COLD };
		int n = atoi(argv[4]);
		off_t size = parse_size(argv[3]);

		if (n < 1 || n > MULTI_MAX || size < 1)
			usage();
		memset(mem_block, 'x', sizeof(mem_block));
		run_multis(vs, mfs, 5, n, -1, size, argv[2], reps);
	} else if (strcmp(argv[1], "stor") == 0) {
		char src[4096], dst[4096];
		size_t len = strlen(argv[3]);
		off_t size, left;

		if (len > 1 && argv[3][len - 1] == 's') {
			/* The zero-copy sender loops over a 64 MiB file. */
			send_secs = atof(argv[3]);
			if (!(send_secs > 0 && send_secs <= 60))
				usage();
			size = 64 * (off_t)MIB;
		} else {
			size = parse_size(argv[3]);
		}

		snprintf(src, sizeof(src), "%s/rawlimit.src.%d", argv[2], (int)getpid());
		snprintf(dst, sizeof(dst), "%s/rawlimit.dst.%d", argv[2], (int)getpid());
		file = open(src, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (file < 0)
			raw_fail(src);
		memset(mem_block, 'x', sizeof(mem_block));
		for (left = size; left > 0; left -= MIB)
			if (write(file, mem_block, left < MIB ? (size_t)left : MIB) < 0)
				raw_fail("write");
		run(STOR_RECV, STOR_SPLICE_ZC, file, size, dst, reps);
		unlink(src);
		unlink(dst);
	} else {
		usage();
	}
	return 0;
}
