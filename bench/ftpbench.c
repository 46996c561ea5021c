/*
 * ftpbench: entry point and the helpers both modes use.
 */
#include "bench.h"

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "src/common/util.h"

static void
die_to_stderr(int is_bug, const char *msg)
{
	fprintf(stderr, "ftpbench: %s%s\n", is_bug ? "BUG: " : "", msg);
	fflush(stdout);
}

void
fb_resolve(struct fb_target *t, const char *host, const char *port)
{
	struct addrinfo hints, *res;
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, port, &hints, &res);
	if (r != 0)
		die("%s port %s: %s", host, port, gai_strerror(r));
	if (res->ai_addrlen > sizeof(t->addr))
		bug("%s: address too long", __func__);
	memcpy(&t->addr, res->ai_addr, res->ai_addrlen);
	t->alen = res->ai_addrlen;
	freeaddrinfo(res);
	/* PASV carries IPv4 only. */
	if (t->addr.ss_family == AF_INET6)
		t->epsv = 1;
}

uint64_t
fb_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit: %s", strerror(errno));
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("setrlimit: %s", strerror(errno));
	return rl.rlim_cur;
}

int
fb_parse_size(const char *s, uint64_t *out)
{
	char num[32];
	size_t len = strlen(s);
	unsigned long long v;
	unsigned shift = 0;

	if (len == 0 || len >= sizeof(num))
		return -1;
	memcpy(num, s, len + 1);
	switch (num[len - 1]) {
	case 'K': case 'k': shift = 10; break;
	case 'M': case 'm': shift = 20; break;
	case 'G': case 'g': shift = 30; break;
	default: break;
	}
	if (shift > 0)
		num[len - 1] = '\0';
	if (tw_parse_uint(num, 0, 1ULL << 40, &v) < 0)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

uint64_t
fb_opt_uint(char opt, const char *s, uint64_t min, uint64_t max)
{
	unsigned long long v;

	if (tw_parse_uint(s, min, max, &v) < 0)
		die("-%c: want a number from %llu to %llu, got \"%s\"", opt,
		    (unsigned long long)min, (unsigned long long)max, s);
	return v;
}

double
fb_opt_secs(char opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > 86400)
		die("-%c: want seconds (0 < t <= 86400), got \"%s\"", opt, s);
	return v;
}

double
fb_cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
	    "usage: ftpbench suite -h HOST -P PORT -u USER -p PASS [-n 300]\n"
	    "                      [-b all|NAME,...] [-s SIZE] [-k PID] [-d DIR]\n"
	    "                      [-t TIMEOUT] [-e] [-E | -I] [-o table|csv]\n"
	    "       ftpbench robots -hHOST -P# -n#users -c#concurrent-connects\n"
	    "                      -t#seconds -b#bytes/s-per-user -B#min-bytes/s\n"
	    "                      -uUSER -pPASS -fFILE -m#packet [-j workers]\n"
	    "                      [-T TIMEOUT] [-r RCVBUF] [-e] [-E | -I] [-C] [-v]\n"
	    "  -e: EPSV instead of PASV; -E: FTPS, AUTH TLS then PBSZ 0, PROT P;\n"
	    "  -I: implicit FTPS (TLS from the first byte); -C: the classic\n"
	    "  dkftpbench's pacing, rate window and ramp (bench/README)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	util_set_die_hook(die_to_stderr);
	/* Line-buffered even into a pipe: bench/compare reads it live. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* OpenSSL writes to sockets without MSG_NOSIGNAL. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "suite") == 0)
		return suite_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "robots") == 0)
		return robots_main(argc - 1, argv + 1);
	usage();
}
