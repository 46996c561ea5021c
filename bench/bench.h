/*
 * ftpbench: the load generator. Two modes share the client engine in
 * sess.c: "suite" (suite.c), the figures of the classic pyftpdlib
 * benchmark plus the ones it lacks, and "robots" (robots.c), dkftpbench's
 * throttled users that either stay alive or die.
 */
#ifndef FB_BENCH_H
#define FB_BENCH_H

#include <stdint.h>

#include "sess.h"

#define FB_DEFAULT_TIMEOUT 30.0

/* Fills t->addr/alen for host:port; dies on failure. */
void fb_resolve(struct fb_target *t, const char *host, const char *port);

/* Raises RLIMIT_NOFILE's soft limit to the hard one; returns the limit. */
uint64_t fb_raise_nofile(void);

/* "10M", "512K", "1G" (powers of 1024) or plain bytes. 0 or -1. */
int fb_parse_size(const char *s, uint64_t *out);

/* Parses a number for option `opt` in [min, max]; dies when it is not. */
uint64_t fb_opt_uint(char opt, const char *s, uint64_t min, uint64_t max);
double fb_opt_secs(char opt, const char *s);

/* User plus system CPU seconds of this process. */
double fb_cpu_self(void);

int suite_main(int argc, char **argv);
int robots_main(int argc, char **argv);

#endif
