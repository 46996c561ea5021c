/*
 * pamauth: what one PAM login costs by itself, the floor under an FTP
 * server's PASS -> 230 for the same user and service (bench/ab --pam).
 *
 *   pamauth SERVICE USER PASSWORD N
 *
 * N times pam_start, pam_authenticate, pam_acct_mgmt, pam_end, one after
 * another; prints "pam_ms MEDIAN P10 P90" (milliseconds). Exits 1 if any
 * login is refused. Run as root (pam_unix reads the shadow file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pamlogin.h"

#define PAMAUTH_MAX_RUNS 100000

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	double *ms;
	long n, i;

	if (argc != 5 || (n = strtol(argv[4], NULL, 10)) < 1 || n > PAMAUTH_MAX_RUNS) {
		fprintf(stderr, "usage: pamauth SERVICE USER PASSWORD N (1..%d)\n",
			PAMAUTH_MAX_RUNS);
		return 2;
	}
	ms = calloc((size_t)n, sizeof(*ms));
	if (ms == NULL)
		return 2;
	for (i = 0; i < n; i++) {
		double t0 = now_ms();
		pam_handle_t *ph = pam_login_start(argv[1], argv[2]);
		int rc = ph != NULL ? pam_login_finish(ph, argv[3]) : PAM_ABORT;

		ms[i] = now_ms() - t0;
		if (rc != PAM_SUCCESS) {
			fprintf(stderr, "pamauth: login %ld of %s refused (%d)\n", i, argv[2], rc);
			return 1;
		}
	}
	qsort(ms, (size_t)n, sizeof(*ms), cmp_double);
	printf("pam_ms %.3f %.3f %.3f\n", ms[n / 2], ms[n / 10], ms[(n * 9) / 10]);
	free(ms);
	return 0;
}
