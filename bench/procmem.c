#include "procmem.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* More processes than this on the box is not a benchmark we can trust. */
#define MAX_PROCS 200000
/* A process tree deeper than this is not a server. */
#define MAX_DEPTH 64

struct pp {
	pid_t pid, ppid;
	int in_tree;
};

long
procmem_parse_ppid(const char *stat)
{
	/* comm may hold spaces and parentheses: the last ')' ends it. */
	const char *p = strrchr(stat, ')');
	char *end;
	long v;

	if (p == NULL || p[1] != ' ' || p[2] == '\0' || p[3] != ' ')
		return -1;
	p += 4;
	v = strtol(p, &end, 10);
	if (end == p || (*end != ' ' && *end != '\0' && *end != '\n'))
		return -1;
	return v;
}

static uint64_t
field_kb(const char *line, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(line, name, n) != 0)
		return 0;
	return strtoull(line + n, NULL, 10);
}

void
procmem_parse_rollup(const char *text, struct procmem *out)
{
	const char *p = text;

	while (p != NULL && *p != '\0') {
		out->rss_kb += field_kb(p, "Rss:");
		out->pss_kb += field_kb(p, "Pss:");
		out->priv_kb += field_kb(p, "Private_Clean:");
		out->priv_kb += field_kb(p, "Private_Dirty:");
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
}

/* Reads a small /proc file whole. Returns the length or -1. */
static ssize_t
read_small(const char *path, char *buf, size_t bufsz)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len < bufsz - 1) {
		ssize_t n = read(fd, buf + len, bufsz - 1 - len);

		if (n < 0) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static size_t
list_procs(struct pp *v, size_t cap)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < cap) {
		char path[64], stat[1024], *end;
		long pid, ppid;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		/* A process that exits between readdir and open is skipped. */
		if (read_small(path, stat, sizeof(stat)) < 0)
			continue;
		ppid = procmem_parse_ppid(stat);
		if (ppid < 0)
			continue;
		v[n].pid = (pid_t)pid;
		v[n].ppid = (pid_t)ppid;
		v[n].in_tree = 0;
		n++;
	}
	closedir(d);
	return n;
}

static int
cmp_pid(const void *a, const void *b)
{
	const struct pp *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Marks root and its descendants, one generation per pass. */
static void
mark_tree(struct pp *v, size_t n, pid_t root)
{
	int depth, changed = 1;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_pid);
	for (i = 0; i < n; i++)
		if (v[i].pid == root)
			v[i].in_tree = 1;
	for (depth = 0; depth < MAX_DEPTH && changed; depth++) {
		changed = 0;
		for (i = 0; i < n; i++) {
			struct pp key, *parent;

			if (v[i].in_tree)
				continue;
			key.pid = v[i].ppid;
			parent = bsearch(&key, v, n, sizeof(*v), cmp_pid);
			if (parent != NULL && parent->in_tree) {
				v[i].in_tree = 1;
				changed = 1;
			}
		}
	}
}

int
procmem_sample(pid_t root, struct procmem *out)
{
	struct pp *v = calloc(MAX_PROCS, sizeof(*v));
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (v == NULL)
		return -1;
	n = list_procs(v, MAX_PROCS);
	mark_tree(v, n, root);
	for (i = 0; i < n; i++) {
		char path[64], text[4096];

		if (!v[i].in_tree)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)v[i].pid);
		if (read_small(path, text, sizeof(text)) < 0)
			continue;
		procmem_parse_rollup(text, out);
		out->nprocs++;
	}
	free(v);
	return out->nprocs > 0 ? 0 : -1;
}
