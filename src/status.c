#include "src/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/hashtab.h"
#include "src/common/log.h"
#include "src/common/monotime.h"
#include "src/common/util.h"
#include "src/penalty.h"
#include "src/pool.h"
#include "src/reload.h"
#include "src/session_table.h"
#include "tw_build.h"

/*
 * Bounds of one snapshot: with 10,000 sessions the list alone would be
 * about a megabyte, built and sent while the listener does nothing else;
 * the counts above it stay whole.
 */
#define STATUS_MAX_BYTES (512 * 1024)
#define STATUS_LIST_MAX 1000
#define STATUS_GROUPS_MAX 200
/* -S waits this long for the listener's snapshot. */
#define STATUS_READ_SECS 10

struct status_client {
	int fd;
	char *buf;
	size_t len, off;
	long long deadline_ms;
};

static struct {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	long long start_ms;
	time_t start_wall;
	char upgrade_note[160];
	struct status_client clients[STATUS_CLIENTS_MAX];
} st = { .fd = -1 };

/* ---------------------------------------------------------------- socket */

static int
status_addr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	return tw_strlcpy(sun->sun_path, path, sizeof(sun->sun_path));
}

/*
 * 0 when nothing is at path, or a socket nobody answers on (removed);
 * -1 (logged) when a listener answers there or something else is there.
 */
static int
status_clear_path(const char *path, const struct sockaddr_un *sun)
{
	struct stat sb;
	int fd, rc;

	if (lstat(path, &sb) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(sb.st_mode)) {
		tw_log(TW_LOG_WARN, "status_socket %s exists and is not a socket: left alone; "
		       "running without a status socket", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	if (rc == 0) {
		tw_log(TW_LOG_WARN, "status_socket %s: another listener answers there; "
		       "running without a status socket", path);
		return -1;
	}
	/* A listener that died (SIGKILL) left it: nobody will answer it again. */
	if (unlink(path) != 0 && errno != ENOENT) {
		tw_log(TW_LOG_WARN, "status_socket %s: cannot remove the stale socket: %s",
		       path, strerror(errno));
		return -1;
	}
	return 0;
}

int
status_socket_open(const char *path, int inherited)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd;

	if (inherited >= 0) {
		struct sockaddr_un got;
		socklen_t len = sizeof(got);

		memset(&got, 0, sizeof(got));
		if (path[0] != '\0' && getsockname(inherited, (struct sockaddr *)&got, &len) == 0 &&
		    strncmp(got.sun_path, path, sizeof(got.sun_path)) == 0 &&
		    fcntl(inherited, F_SETFL, O_NONBLOCK) == 0 &&
		    fcntl(inherited, F_SETFD, FD_CLOEXEC) == 0) {
			(void)tw_strlcpy(st.path, path, sizeof(st.path));
			return inherited;
		}
		close(inherited);
	}
	if (path[0] == '\0')
		return -1;
	if (status_addr(path, &sun) != 0) {
		tw_log(TW_LOG_WARN, "status_socket %s: longer than a socket path may be; "
		       "running without a status socket", path);
		return -1;
	}
	if (status_clear_path(path, &sun) != 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("status_socket: socket: %s", strerror(errno));
	/* Root's alone from the moment it exists (0700), then 0600 as documented. */
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 16) != 0) {
		tw_log(TW_LOG_WARN, "status_socket %s: %s; running without a status socket",
		       path, strerror(errno));
		(void)umask(old);
		close(fd);
		return -1;
	}
	(void)umask(old);
	(void)tw_strlcpy(st.path, path, sizeof(st.path));
	return fd;
}

void
status_start(int fd)
{
	size_t i;

	st.fd = fd;
	st.start_ms = tw_mono_ms();
	st.start_wall = time(NULL);
	for (i = 0; i < STATUS_CLIENTS_MAX; i++)
		st.clients[i].fd = -1;
}

int
status_fd(void)
{
	return st.fd;
}

static void
client_drop(struct status_client *c)
{
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void
status_stop(int unlink_path)
{
	size_t i;

	for (i = 0; i < STATUS_CLIENTS_MAX; i++)
		if (st.clients[i].fd >= 0)
			client_drop(&st.clients[i]);
	if (st.fd < 0)
		return;
	close(st.fd);
	st.fd = -1;
	if (unlink_path)
		(void)unlink(st.path);
}

void
status_set_upgrade_note(const char *note)
{
	(void)tw_strlcpy(st.upgrade_note, note, sizeof(st.upgrade_note));
}

/* ---------------------------------------------------------------- snapshot */

struct text {
	char *p;
	size_t len, cap;
	int full;
};

static void
text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		if (n < 0 || t->cap >= STATUS_MAX_BYTES) {
			t->p[t->len] = '\0';
			t->full = 1;
			return;
		}
		{
			size_t ncap = t->cap * 2 > STATUS_MAX_BYTES ? STATUS_MAX_BYTES : t->cap * 2;
			char *np = realloc(t->p, ncap);

			if (np == NULL) {
				t->full = 1;
				return;
			}
			t->p = np;
			t->cap = ncap;
		}
	}
}

/* IPv4 (kept as v4-mapped IPv6 in the tables) in its own notation. */
static void
addr_text(const struct addr_key *a, char *out, size_t len)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(a->b, mapped, sizeof(mapped)) == 0 ?
	    inet_ntop(AF_INET, &a->b[12], out, (socklen_t)len) == NULL :
	    inet_ntop(AF_INET6, a->b, out, (socklen_t)len) == NULL)
		(void)tw_strlcpy(out, "?", len);
}

static void
duration_text(long long secs, char *out, size_t len)
{
	if (secs >= 86400)
		(void)snprintf(out, len, "%lldd%02lldh%02lldm", secs / 86400, secs / 3600 % 24,
			       secs / 60 % 60);
	else if (secs >= 3600)
		(void)snprintf(out, len, "%lldh%02lldm%02llds", secs / 3600, secs / 60 % 60,
			       secs % 60);
	else if (secs >= 60)
		(void)snprintf(out, len, "%lldm%02llds", secs / 60, secs % 60);
	else
		(void)snprintf(out, len, "%llds", secs);
}

/* A user as the snapshot names it: "(pre-login)" before a login. */
struct user_key {
	char name[SESSION_USER_MAX + 1];
	int anonymous;
	int logged_in;
};

static void
user_key_of(const struct session_info *s, struct user_key *k)
{
	memset(k, 0, sizeof(*k));
	k->logged_in = s->logged_in;
	k->anonymous = s->anonymous;
	(void)tw_strlcpy(k->name, s->logged_in ? s->user : "", sizeof(k->name));
}

static const char *
user_text(const struct user_key *k, char *out, size_t len)
{
	if (!k->logged_in)
		return "-";
	(void)snprintf(out, len, "%s%s", k->name[0] != '\0' ? k->name : "?",
		       k->anonymous ? " (anonymous)" : "");
	return out;
}

static void
snapshot_sessions(struct text *t, long long now_ms)
{
	struct hashtab *users = hashtab_new(sizeof(struct user_key), sizeof(unsigned), 64);
	struct session_info s;
	struct user_key k;
	size_t pos = 0, prelogin = 0, listed = 0, groups = 0;
	unsigned count;
	const void *key;
	void *val;
	pid_t pid;
	char ubuf[SESSION_USER_MAX + 32], abuf[INET6_ADDRSTRLEN], dur[32];
	const struct addr_key *a;

	while ((pid = sessions_next_info(&pos, &s)) != 0) {
		unsigned *n;

		prelogin += !s.logged_in;
		user_key_of(&s, &k);
		if (users != NULL && s.logged_in && (n = hashtab_insert(users, &k)) != NULL)
			(*n)++;
	}
	text_add(t, "sessions: %zu (pre-login %zu, logged in %zu)\n", sessions_count(), prelogin,
		 sessions_count() - prelogin);
	text_add(t, "by user (logged in):%s\n", users == NULL || hashtab_count(users) == 0 ?
		 " none" : "");
	pos = 0;
	while (users != NULL && (key = hashtab_next(users, &pos, &val)) != NULL) {
		if (groups++ == STATUS_GROUPS_MAX) {
			text_add(t, "  ... %zu more users\n", hashtab_count(users) - STATUS_GROUPS_MAX);
			break;
		}
		text_add(t, "  %-24s %u\n", user_text(key, ubuf, sizeof(ubuf)),
			 *(const unsigned *)val);
	}
	if (users != NULL)
		hashtab_free(users);
	text_add(t, "by source:%s\n", sessions_count() == 0 ? " none" : "");
	pos = 0;
	groups = 0;
	while ((a = sessions_next_addr(&pos, &count)) != NULL) {
		if (groups++ == STATUS_GROUPS_MAX) {
			text_add(t, "  ... more sources\n");
			break;
		}
		addr_text(a, abuf, sizeof(abuf));
		text_add(t, "  %-15s %u\n", abuf, count);
	}
	text_add(t, "session list:%s\n", sessions_count() == 0 ? " none" :
		 "\n  PID      STATE      AGE        SOURCE          USER");
	pos = 0;
	while ((pid = sessions_next_info(&pos, &s)) != 0) {
		if (listed++ == STATUS_LIST_MAX) {
			text_add(t, "  ... %zu more sessions\n", sessions_count() - STATUS_LIST_MAX);
			break;
		}
		user_key_of(&s, &k);
		addr_text(&s.addr, abuf, sizeof(abuf));
		duration_text((now_ms - s.since_ms) / 1000, dur, sizeof(dur));
		text_add(t, "  %-8d %-10s %-10s %-15s %s\n", (int)pid,
			 s.logged_in ? "logged-in" : "pre-login", dur, abuf,
			 user_text(&k, ubuf, sizeof(ubuf)));
	}
}

static void
snapshot_penalties(struct text *t, const struct tw_config *cfg)
{
	enum penalty_reason why;
	struct addr_key a;
	long long left;
	size_t pos = 0, n = 0;
	char abuf[INET6_ADDRSTRLEN];

	text_add(t, "penalties in force:");
	while (penalty_next_active(cfg, &pos, &a, &why, &left) == 0) {
		if (n++ == 0)
			text_add(t, "\n");
		if (n > STATUS_GROUPS_MAX) {
			text_add(t, "  ... more\n");
			return;
		}
		addr_text(&a, abuf, sizeof(abuf));
		text_add(t, "  %-15s refused %lld s more (%s)\n", abuf, left,
			 why == PENALTY_FAILED_LOGINS ? "failed logins" : "bad sessions");
	}
	if (n == 0)
		text_add(t, " none\n");
}

static char *
snapshot(const struct tw_config *cfg, size_t *len)
{
	struct text t = { malloc(16384), 0, 16384, 0 };
	long long now = tw_mono_ms();
	char since[64], up[32];
	struct tm tm;

	if (t.p == NULL)
		return NULL;
	t.p[0] = '\0';
	if (gmtime_r(&st.start_wall, &tm) == NULL ||
	    strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		(void)tw_strlcpy(since, "?", sizeof(since));
	duration_text((now - st.start_ms) / 1000, up, sizeof(up));
	text_add(&t, "twinftpd %s, listener pid %d\nup %s, since %s\n", TW_VERSION,
		 (int)getpid(), up, since);
	text_add(&t, "config: %s, generation %lu (reloads since start)\n", reload_config_path(),
		 reload_generation());
	text_add(&t, "upgrade: %s\n", st.upgrade_note[0] != '\0' ? st.upgrade_note : "none");
	text_add(&t, "ready pool: %zu ready (target %u), %zu being retired after a reload\n",
		 pool_ready(), pool_target(), pool_retiring());
	snapshot_penalties(&t, cfg);
	snapshot_sessions(&t, now);
	if (t.full)
		text_add(&t, "... (snapshot cut at %d bytes)\n", STATUS_MAX_BYTES);
	*len = strlen(t.p);
	return t.p;
}

/* ---------------------------------------------------------------- serving */

/* 0 while there is more to write, -1 when done or dropped. */
static int
client_write(struct status_client *c)
{
	while (c->off < c->len) {
		ssize_t w = send(c->fd, c->buf + c->off, c->len - c->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w <= 0)
			return -1;
		c->off += (size_t)w;
	}
	return -1;
}

static void
status_accept(const struct tw_config *cfg)
{
	/* Bounded: at most one snapshot per slot per wake-up. */
	int budget = STATUS_CLIENTS_MAX;

	while (budget-- > 0) {
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		struct status_client *c = NULL;
		size_t i;
		int fd = accept4(st.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		/* The file is root's 0600 already; the peer is checked too. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.uid != 0) {
			close(fd);
			continue;
		}
		for (i = 0; i < STATUS_CLIENTS_MAX && c == NULL; i++)
			if (st.clients[i].fd < 0)
				c = &st.clients[i];
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->buf = snapshot(cfg, &c->len);
		c->off = 0;
		c->deadline_ms = tw_mono_ms() + STATUS_CLIENT_SECS * 1000LL;
		if (c->buf == NULL || client_write(c) != 0)
			client_drop(c);
	}
}

size_t
status_pollfds(struct pollfd *p, size_t max)
{
	size_t n = 0, i;

	if (st.fd < 0 || max == 0)
		return 0;
	p[n].fd = st.fd;
	p[n].events = POLLIN;
	p[n++].revents = 0;
	for (i = 0; i < STATUS_CLIENTS_MAX && n < max; i++) {
		if (st.clients[i].fd < 0)
			continue;
		p[n].fd = st.clients[i].fd;
		p[n].events = POLLOUT;
		p[n++].revents = 0;
	}
	return n;
}

void
status_events(const struct pollfd *p, size_t n, const struct tw_config *cfg)
{
	long long now = tw_mono_ms();
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (p[i].revents == 0 || p[i].fd == st.fd)
			continue;
		for (j = 0; j < STATUS_CLIENTS_MAX; j++)
			if (st.clients[j].fd == p[i].fd && client_write(&st.clients[j]) != 0)
				client_drop(&st.clients[j]);
	}
	for (j = 0; j < STATUS_CLIENTS_MAX; j++)
		if (st.clients[j].fd >= 0 && now >= st.clients[j].deadline_ms)
			client_drop(&st.clients[j]);
	if (n > 0 && p[0].fd == st.fd && (p[0].revents & POLLIN))
		status_accept(cfg);
}

int
status_poll_timeout(int wait_ms)
{
	long long now = tw_mono_ms();
	size_t i;

	for (i = 0; i < STATUS_CLIENTS_MAX; i++) {
		long long left;

		if (st.clients[i].fd < 0)
			continue;
		left = st.clients[i].deadline_ms - now;
		if (left < 0)
			left = 0;
		if (wait_ms < 0 || left < wait_ms)
			wait_ms = (int)left;
	}
	return wait_ms;
}

/* ---------------------------------------------------------------- -S */

int
status_print(const char *path)
{
	long long deadline = tw_mono_ms() + STATUS_READ_SECS * 1000LL;
	struct sockaddr_un sun;
	char buf[65536];
	size_t got = 0;
	int fd;

	if (path[0] == '\0') {
		fprintf(stderr, "twinftpd: status_socket is empty in this configuration: "
			"the listener keeps no status socket\n");
		return 1;
	}
	if (status_addr(path, &sun) != 0) {
		fprintf(stderr, "twinftpd: status_socket %s is too long for a socket path\n", path);
		return 1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		int e = errno;

		fprintf(stderr, "twinftpd: no listener answers on %s (%s): %s\n", path, strerror(e),
			e == ENOENT ? "is twinftpd running (listen=YES) with this configuration?" :
			e == ECONNREFUSED ? "the listener that made it is gone" :
			e == EACCES || e == EPERM ? "the status socket is root's alone" :
			"see the daemon's log");
		return 1;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - tw_mono_ms();
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			fprintf(stderr, "twinftpd: the listener on %s did not finish its snapshot "
				"within %d s\n", path, STATUS_READ_SECS);
			return 1;
		}
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "twinftpd: %s: %s\n", path, strerror(errno));
			return 1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (fwrite(buf, 1, (size_t)r, stdout) != (size_t)r)
			return 1;
	}
	close(fd);
	if (got == 0) {
		/* It drops a client beyond STATUS_CLIENTS_MAX at once. */
		fprintf(stderr, "twinftpd: the listener on %s closed without a snapshot (busy "
			"with other status clients?)\n", path);
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
