/*
 * Memory of a whole server: the process given with -k and every
 * descendant, found through the ppid links in /proc/PID/stat. A server
 * with two or three processes per session must not look small because
 * only its listener (or only the listener's direct children) was read.
 */
#ifndef FB_PROCMEM_H
#define FB_PROCMEM_H

#include <stdint.h>
#include <sys/types.h>

struct procmem {
	uint64_t priv_kb;	/* Private_Clean + Private_Dirty (USS) */
	uint64_t pss_kb;
	uint64_t rss_kb;
	unsigned nprocs;
};

/* Sums /proc/PID/smaps_rollup over root and its descendants. 0 or -1. */
int procmem_sample(pid_t root, struct procmem *out);

/* Parses the text of one smaps_rollup file; adds to out. Pure. */
void procmem_parse_rollup(const char *text, struct procmem *out);

/* The ppid field of a /proc/PID/stat line, or -1. Pure. */
long procmem_parse_ppid(const char *stat);

#endif
