/*
 * rawlimit: what one TCP stream on loopback moves with no FTP server in
 * the way, the limit bench/compare puts beside the RETR and STOR figures.
 *
 *   rawlimit retr FILE [-r REPS]      a sendfile(2) sender, a reader that
 *                                     discards (recv MSG_TRUNC, 1 MiB)
 *   rawlimit stor DIR SIZE [-r REPS]  a sender of SIZE bytes (sendfile from
 *                                     a file in DIR), a receiver that writes
 *                                     a file in DIR: recv+write, and splice
 *                                     socket -> pipe -> file
 *
 * Each variant (socket options of the sending side for retr, the
 * receiver's copy for stor) runs REPS times, interleaved, and prints its
 * median (sendfile+nodelay is how twinftpd sent before TCP_CORK; +lowat
 * adds its TCP_NOTSENT_LOWAT), as MB/s (10^6 bytes) from connect to the last byte (retr) or to
 * the file closed (stor):
 *
 *   RAW retr sendfile+cork 4812.3 MB/s
 *
 * The two ends are two processes, as a server and a client are.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024 * 1024)
#define MAX_REPS 50
#define PIPE_SIZE MIB		/* fcntl F_SETPIPE_SZ: at most pipe-max-size (1 MiB) */
#define NOTSENT_LOWAT (128 * 1024)	/* twinftpd's on data connections */

enum variant {
	RETR_PLAIN, RETR_NODELAY, RETR_CORK, RETR_CORK_LOWAT,
	STOR_RECV, STOR_SPLICE,
	VARIANTS
};

static const char *const variant_name[VARIANTS] = {
	"sendfile", "sendfile+nodelay", "sendfile+cork", "sendfile+cork+lowat",
	"recv+write", "splice",
};

static void
fail(const char *what)
{
	fprintf(stderr, "rawlimit: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
listen_any(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 || listen(fd, 1) != 0 ||
	    getsockname(fd, (struct sockaddr *)a, &len) != 0)
		fail("listen");
	return fd;
}

static void
setopt(int fd, int opt, int val)
{
	if (setsockopt(fd, IPPROTO_TCP, opt, &val, sizeof(val)) != 0)
		fail("setsockopt");
}

/* The sending side: the whole file in blocking sendfile calls. */
static void
send_all(int sock, int file, off_t size, enum variant v)
{
	off_t off = 0;

	if (v == RETR_NODELAY)
		setopt(sock, TCP_NODELAY, 1);
	if (v == RETR_CORK_LOWAT)
		setopt(sock, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT);
	if (v == RETR_CORK || v == RETR_CORK_LOWAT)
		setopt(sock, TCP_CORK, 1);
	while (off < size) {
		ssize_t n = sendfile(sock, file, &off, (size_t)(size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("sendfile");
	}
	if (v == RETR_CORK || v == RETR_CORK_LOWAT)
		setopt(sock, TCP_CORK, 0);
}

/* recv(2) until EOF, into out, or discarded (MSG_TRUNC) with out -1. */
static off_t
recv_write(int sock, int out)
{
	static char buf[MIB];
	off_t got = 0;

	for (;;) {
		ssize_t n = recv(sock, buf, sizeof(buf), out < 0 ? MSG_TRUNC : 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("recv");
		if (n == 0)
			return got;
		if (out >= 0 && write(out, buf, (size_t)n) != n)
			fail("write");
		got += n;
	}
}

static off_t
recv_splice(int sock, int out)
{
	int p[2];
	off_t got = 0;

	if (pipe2(p, O_CLOEXEC) != 0)
		fail("pipe2");
	(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
	for (;;) {
		ssize_t n = splice(sock, NULL, p[1], NULL, PIPE_SIZE, SPLICE_F_MOVE), m;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("splice in");
		if (n == 0)
			break;
		got += n;
		while (n > 0) {
			m = splice(p[0], NULL, out, NULL, (size_t)n, SPLICE_F_MOVE);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				fail("splice out");
			n -= m;
		}
	}
	close(p[0]);
	close(p[1]);
	return got;
}

/* One transfer of size bytes from file; returns MB/s. */
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
		fail("fork");
	if (pid == 0) {
		int c = accept(lfd, NULL, NULL);

		if (c < 0)
			fail("accept");
		send_all(c, file, size, v < STOR_RECV ? v : RETR_PLAIN);
		close(c);
		_exit(0);
	}
	close(lfd);
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (out_path != NULL) {
		out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (out < 0)
			fail(out_path);
	}
	t0 = now_s();
	if (sock < 0 || connect(sock, (struct sockaddr *)&a, sizeof(a)) != 0)
		fail("connect");
	if (v == STOR_SPLICE)
		got = recv_splice(sock, out);
	else
		got = recv_write(sock, out);
	if (out >= 0 && close(out) != 0)
		fail("close");
	t = now_s() - t0;
	close(sock);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		exit(2);
	if (got != size) {
		fprintf(stderr, "rawlimit: %s moved %lld of %lld bytes\n", variant_name[v],
			(long long)got, (long long)size);
		exit(2);
	}
	return (double)size / 1e6 / t;
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
			r[v][i] = run_once((enum variant)v, file, size, out);
	for (v = first; v <= last; v++) {
		qsort(r[v], (size_t)reps, sizeof(double), cmp_double);
		printf("RAW %s %s %.1f MB/s\n", v < STOR_RECV ? "retr" : "stor", variant_name[v],
		       r[v][reps / 2]);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: rawlimit retr FILE [-r REPS]\n"
		"       rawlimit stor DIR SIZE [-r REPS]\n");
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
	int reps = 5, file, nargs;
	struct stat st;

	if (argc < 3)
		usage();
	nargs = strcmp(argv[1], "stor") == 0 ? 4 : 3;
	if (argc == nargs + 2 && strcmp(argv[nargs], "-r") == 0)
		reps = atoi(argv[nargs + 1]);
	else if (argc != nargs)
		usage();
	if (reps < 1 || reps > MAX_REPS)
		usage();
	if (strcmp(argv[1], "retr") == 0) {
		file = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (file < 0 || fstat(file, &st) != 0)
			fail(argv[2]);
		run(RETR_PLAIN, RETR_CORK_LOWAT, file, st.st_size, NULL, reps);
	} else if (strcmp(argv[1], "stor") == 0) {
		char src[4096], dst[4096];
		off_t size = parse_size(argv[3]);
		static char block[MIB];
		off_t left;

		snprintf(src, sizeof(src), "%s/rawlimit.src.%d", argv[2], (int)getpid());
		snprintf(dst, sizeof(dst), "%s/rawlimit.dst.%d", argv[2], (int)getpid());
		file = open(src, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (file < 0)
			fail(src);
		memset(block, 'x', sizeof(block));
		for (left = size; left > 0; left -= MIB)
			if (write(file, block, left < MIB ? (size_t)left : MIB) < 0)
				fail("write");
		run(STOR_RECV, STOR_SPLICE, file, size, dst, reps);
		unlink(src);
		unlink(dst);
	} else {
		usage();
	}
	return 0;
}
