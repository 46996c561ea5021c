/*
 * ftpbench robots: dkftpbench's model. Each robot logs in (at most -c
 * logins in flight at once), sends TYPE I and SIZE FILE once, then until
 * the end of the run fetches FILE in passive mode, reading -m bytes per
 * tick so that it takes -b bytes/s. A robot is dead, and is not replaced,
 * when its session fails, a step times out, a fetch does not deliver
 * SIZE's byte count, or its rate over a fetch falls below -B. -C: the
 * classic dkftpbench's pacing, rate window and ramp (bench/README).
 *
 * One process holds at most RLIMIT_NOFILE fds and a robot needs two
 * during a fetch, so the robots are split over -j worker processes, each
 * with its own epoll loop, reporting once a second to the parent over a
 * pipe. The parent prints users alive/dead every second and the totals at
 * the end, with the CPU the generator itself used.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/util.h"

#define MAX_WORKERS 64
#define MAX_ROBOTS 1000000
/* fds a worker keeps for itself: epoll, pipe, stdio, slack. */
#define WORKER_FD_SLACK 64
/*
 * A fetch still running is judged on its rate so far once it is this
 * old: a robot throttled to -b can never catch up more than one packet,
 * so a short window would kill robots for one slow PASV at the start.
 * Fetches shorter than this are judged on their whole rate at the end.
 */
#define RATE_WINDOW_SECS 5.0
/*
 * Past the end the robots hang up at about this many a second over all
 * workers, not all in the same millisecond: no figure is measured then,
 * and 10,000 sessions ending at once are 20,000 server processes freeing
 * their seccomp filters at once, which once deadlocked this kernel's work
 * queue (bench/README, "Stopping a server").
 */
#define HANGUP_PER_SEC 4000
/*
 * SO_RCVBUF of a robot's data socket (-r). A reader throttled to a few
 * KB/s needs no more, and with the kernel's default of 128 KB, 10,000
 * robots alone would pin over 1 GB of the machine-wide TCP memory
 * (tcp_mem) that the server's sockets need too: the generator would be
 * what fails. 16 KB (the kernel doubles it) still takes a 10 KB file in
 * one window.
 */
#define DEFAULT_RCVBUF 16384
/* -v prints at most this many deaths per worker. */
#define VERBOSE_DEATHS 20

enum robot_phase { R_PENDING, R_CONNECTING, R_ALIVE, R_DEAD };
enum robot_step { ST_LOGIN, ST_TYPE, ST_SIZE, ST_FETCH };
enum death { D_LOGIN, D_TIMEOUT, D_SLOW, D_SIZE, D_REFUSED, D_CLOSED, D_COUNT };

static const char *const death_names[D_COUNT] = {
	"login", "timeout", "slow", "size", "refused", "closed",
};

struct robot {
	uint8_t phase, step;
	int64_t expect;			/* SIZE's answer, or -1 until known */
};

/* A worker's report; one write of less than PIPE_BUF is atomic. */
struct wstat {
	uint32_t worker, final;
	uint32_t alive, dead, connecting, pending;
	uint64_t bytes, fetches;
	double cpu;
	uint32_t deaths[D_COUNT];
	uint64_t tls_data, tls_resumed, tls_unclean;
	/* Since the last report: the latest paced read (s after its tick),
	 * time runnable but not running (schedstat, s), involuntary
	 * context switches. Why a worker's reads ran late. */
	double lag, lag_sum, rq_wait;
	uint64_t nivcsw, reads;
	uint32_t batch;			/* most paced reads due in one turn */
};

struct opts {
	struct fb_target tgt;
	uint32_t n, c, j;
	double secs;
	uint32_t rate, min_rate, packet;
	const char *file;
	int verbose;
	int classic;			/* -C */
};

struct worker {
	const struct opts *o;
	struct fb_loop L;
	struct robot *r;
	uint32_t id, base, n, cmax;
	uint32_t next;			/* first robot not started */
	int fd;				/* pipe to the parent */
	int stopping;
	double start;			/* the run began */
	struct wstat st;
	uint32_t verbose_left;
	double rq_wait_at;		/* rq_wait_self() at the last report */
	uint64_t nivcsw_at;
};

/* ---- worker ---- */

static double
since_op(const struct sess *s, double t)
{
	return t > 0 && s->op_start > 0 ? (t - s->op_start) * 1000 : -1;
}

static void
robot_dies(struct worker *W, struct sess *s, enum death why)
{
	struct robot *r = &W->r[s - W->L.s];

	if (r->phase == R_ALIVE)
		W->st.alive--;
	else if (r->phase == R_CONNECTING)
		W->st.connecting--;
	r->phase = R_DEAD;
	W->st.dead++;
	W->st.deaths[why]++;
	if (W->o->verbose && W->verbose_left > 0) {
		W->verbose_left--;
		/* When, and how far its last operation got, in ms after it
		 * began (PASV for a fetch); -1: not reached. */
		fprintf(stderr, "robot %u dead: %s (%s, last reply %d) t=%.2f (monotonic %.6f)"
			" op: cmd %.0f data %.0f eof %.0f\n",
			W->base + (uint32_t)(s - W->L.s), death_names[why],
			s->err != NULL ? s->err : "-", s->code, fb_now() - W->start, fb_now(),
			since_op(s, s->cmd_at), since_op(s, s->xfer_start),
			since_op(s, s->eof_at));
		sess_reads_dump(s, stderr);
	}
	sess_close(&W->L, s);
}

/*
 * Keeps -c logins in flight until every robot has started; with -C, as
 * the classic dkftpbench, none after the first death (of this worker's).
 */
static void
start_more(struct worker *W)
{
	while (!W->stopping && W->st.connecting < W->cmax && W->next < W->n &&
	       !(W->o->classic && W->st.dead > 0)) {
		struct sess *s = &W->L.s[W->next];

		W->r[W->next].phase = R_CONNECTING;
		W->st.connecting++;
		W->st.pending--;
		W->next++;
		sess_login(&W->L, s);
	}
}

static void
fetch(struct worker *W, struct sess *s, struct robot *r)
{
	r->step = ST_FETCH;
	sess_retr(&W->L, s, W->o->file, r->expect, W->o->rate, W->o->packet);
}

/* When a fetch's rate is counted from: -C, its first data byte. */
static double
rate_from(const struct worker *W, const struct sess *s)
{
	return W->o->classic && s->first_at > 0 ? s->first_at : s->op_start;
}

static void
fetch_done(struct worker *W, struct sess *s, struct robot *r)
{
	double secs = s->done_at - rate_from(W, s);

	/*
	 * The rate over the whole fetch, PASV to 226: churn costs count.
	 * -C: from the first data byte to the later of EOF and 226.
	 */
	if (secs > 0 && (double)s->bytes < (double)W->o->min_rate * secs) {
		s->err = "fetch below minimum rate";
		robot_dies(W, s, D_SLOW);
		return;
	}
	if (r->expect < 0)
		r->expect = (int64_t)s->bytes;
	W->st.fetches++;
	fetch(W, s, r);
}

static enum death
death_of(struct sess *s, struct robot *r, int result)
{
	if (r->phase == R_CONNECTING)
		return D_LOGIN;
	if (result == 0)
		return D_REFUSED;
	if (s->err != NULL && strncmp(s->err, "timeout", 7) == 0)
		return D_TIMEOUT;
	if (s->err != NULL && strcmp(s->err, "file size differs from SIZE") == 0)
		return D_SIZE;
	return D_CLOSED;
}

static void
robot_done(struct fb_loop *L, struct sess *s, int result)
{
	struct worker *W = L->ctx;
	struct robot *r = &W->r[s - L->s];
	char line[FB_PATH_MAX + 8];
	uint64_t size;

	if (W->stopping)
		return;
	/* A refused SIZE only means the byte count is learned from a fetch. */
	if (result == 0 && r->step == ST_SIZE) {
		r->expect = -1;
		fetch(W, s, r);
		return;
	}
	if (result != 1) {
		int was_connecting = r->phase == R_CONNECTING;

		robot_dies(W, s, death_of(s, r, result));
		if (was_connecting)
			start_more(W);
		return;
	}
	switch (r->step) {
	case ST_LOGIN:
		W->st.connecting--;
		W->st.alive++;
		r->phase = R_ALIVE;
		start_more(W);
		r->step = ST_TYPE;
		sess_cmd(L, s, "TYPE I");
		break;
	case ST_TYPE:
		s->typed = 1;
		r->step = ST_SIZE;
		snprintf(line, sizeof(line), "SIZE %s", W->o->file);
		sess_cmd(L, s, line);
		break;
	case ST_SIZE:
		if (s->code == 213 && ftp_parse_size(s->rr.last, &size) == 0 &&
		    size <= INT64_MAX)
			r->expect = (int64_t)size;
		fetch(W, s, r);
		break;
	default:
		fetch_done(W, s, r);
		break;
	}
}

/* Mid-fetch: a robot already below -B over this fetch is dead now. */
static void
check_rates(struct worker *W)
{
	double now = fb_now();
	uint32_t i;

	for (i = 0; i < W->next; i++) {
		struct sess *s = &W->L.s[i];
		double secs = now - rate_from(W, s);

		if (W->r[i].phase != R_ALIVE || W->r[i].step != ST_FETCH ||
		    s->state == SS_IDLE || s->state == SS_FREE)
			continue;
		if (secs >= RATE_WINDOW_SECS &&
		    (double)s->bytes < (double)W->o->min_rate * secs) {
			s->err = "below minimum rate";
			robot_dies(W, s, D_SLOW);
		}
	}
}

/* This process's runqueue wait so far, s (0 without schedstats). */
static double
rq_wait_self(void)
{
	unsigned long long run, wait;
	FILE *f = fopen("/proc/self/schedstat", "r");
	int ok;

	if (f == NULL)
		return 0;
	ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
	fclose(f);
	return ok ? (double)wait / 1e9 : 0;
}

static void
send_stat(struct worker *W, int final)
{
	struct rusage ru;
	double rq = rq_wait_self();

	getrusage(RUSAGE_SELF, &ru);
	W->st.lag = W->L.tick_lag_max;
	W->L.tick_lag_max = 0;
	W->st.lag_sum = W->L.tick_lag_sum;
	W->st.reads = W->L.tick_reads;
	W->L.tick_lag_sum = 0;
	W->L.tick_reads = 0;
	W->st.batch = W->L.tick_batch_max;
	W->L.tick_batch_max = 0;
	W->st.rq_wait = rq - W->rq_wait_at;
	W->rq_wait_at = rq;
	W->st.nivcsw = (uint64_t)ru.ru_nivcsw - W->nivcsw_at;
	W->nivcsw_at = (uint64_t)ru.ru_nivcsw;
	W->st.final = (uint32_t)final;
	W->st.bytes = W->L.bytes;
	W->st.cpu = fb_cpu_self();
	W->st.tls_data = W->L.tls_stats.data_conns;
	W->st.tls_resumed = W->L.tls_stats.data_resumed;
	W->st.tls_unclean = W->L.tls_stats.unclean_eof;
	if (write(W->fd, &W->st, sizeof(W->st)) != (ssize_t)sizeof(W->st))
		_exit(3);	/* the parent is gone: nobody to report to */
}

/* Closes every robot's session, HANGUP_PER_SEC over all workers. */
static void
hang_up(struct worker *W)
{
	/* Per 10 ms, this worker's share; bounded: n / per_tick naps. */
	uint32_t per_tick = HANGUP_PER_SEC / 100 / W->o->j, i;
	const struct timespec nap = { 0, 10 * 1000 * 1000 };

	if (per_tick == 0)
		per_tick = 1;
	for (i = 0; i < W->n; i++) {
		sess_close(&W->L, &W->L.s[i]);
		if ((i + 1) % per_tick == 0 && i + 1 < W->n)
			nanosleep(&nap, NULL);
	}
}

static void __attribute__((noreturn))
worker_main(const struct opts *o, uint32_t id, uint32_t base, uint32_t n,
	    uint32_t cmax, int fd, double start)
{
	struct worker W;
	double end = start + o->secs;
	unsigned t;

	memset(&W, 0, sizeof(W));
	W.o = o;
	W.id = id;
	W.base = base;
	W.n = n;
	W.cmax = cmax;
	W.fd = fd;
	W.verbose_left = VERBOSE_DEATHS;
	W.start = start;
	W.st.worker = id;
	W.st.pending = n;
	W.r = calloc(n, sizeof(*W.r));
	if (W.r == NULL)
		die("out of memory for %u robots", n);
	loop_init(&W.L, &o->tgt, n);
	W.L.classic = o->classic;
	W.L.trace = o->verbose;
	W.L.ctx = &W;
	W.L.on_done = robot_done;
	start_more(&W);
	for (t = 1;; t++) {
		double tick = start + t;

		loop_run(&W.L, tick < end ? tick : end, NULL);
		check_rates(&W);
		if (fb_now() >= end)
			break;
		send_stat(&W, 0);
	}
	/* The run is over: closing is not dying. */
	W.stopping = 1;
	send_stat(&W, 1);
	hang_up(&W);
	loop_free(&W.L);
	_exit(0);
}

/* ---- parent ---- */

struct wproc {
	pid_t pid;
	int fd;
	int done;
	struct wstat last;
};

static void
sum_stats(const struct wproc *w, uint32_t j, struct wstat *sum)
{
	uint32_t i, k;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < j; i++) {
		sum->alive += w[i].last.alive;
		sum->dead += w[i].last.dead;
		sum->connecting += w[i].last.connecting;
		sum->pending += w[i].last.pending;
		sum->bytes += w[i].last.bytes;
		sum->fetches += w[i].last.fetches;
		sum->cpu += w[i].last.cpu;
		sum->tls_data += w[i].last.tls_data;
		sum->tls_resumed += w[i].last.tls_resumed;
		sum->tls_unclean += w[i].last.tls_unclean;
		if (w[i].last.lag > sum->lag)
			sum->lag = w[i].last.lag;
		if (w[i].last.rq_wait > sum->rq_wait)
			sum->rq_wait = w[i].last.rq_wait;
		sum->nivcsw += w[i].last.nivcsw;
		sum->lag_sum += w[i].last.lag_sum;
		sum->reads += w[i].last.reads;
		if (w[i].last.batch > sum->batch)
			sum->batch = w[i].last.batch;
		for (k = 0; k < D_COUNT; k++)
			sum->deaths[k] += w[i].last.deaths[k];
	}
}

/* Reads whatever reports arrived; a closed pipe ends that worker. */
static void
drain_pipes(struct wproc *w, uint32_t j, int timeout_ms)
{
	struct pollfd pfd[MAX_WORKERS];
	uint32_t i;

	for (i = 0; i < j; i++) {
		pfd[i].fd = w[i].done ? -1 : w[i].fd;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	if (poll(pfd, j, timeout_ms) <= 0)
		return;
	for (i = 0; i < j; i++) {
		struct wstat st;
		ssize_t n;

		if (pfd[i].revents == 0)
			continue;
		n = read(w[i].fd, &st, sizeof(st));
		if (n == (ssize_t)sizeof(st)) {
			w[i].last = st;
			if (st.final)
				w[i].done = 1;
		} else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
			w[i].done = 2;	/* died without its final report */
		}
	}
}

static int
all_done(const struct wproc *w, uint32_t j)
{
	uint32_t i;

	for (i = 0; i < j; i++)
		if (!w[i].done)
			return 0;
	return 1;
}

static void
print_progress(const struct wproc *w, uint32_t j, double t, uint64_t *prev_bytes)
{
	struct wstat sum;

	sum_stats(w, j, &sum);
	printf("t=%.0f alive=%u dead=%u connecting=%u pending=%u fetches=%llu"
	       " MB/s=%.2f cpu=%.1f%% lag=%.1fms lag_avg=%.2fms rqwait=%.1fms nivcsw=%llu batch=%u\n", t, sum.alive,
	       sum.dead, sum.connecting, sum.pending, (unsigned long long)sum.fetches,
	       (double)(sum.bytes - *prev_bytes) / (1024.0 * 1024.0),
	       t > 0 ? 100.0 * sum.cpu / t : 0, sum.lag * 1000,
	       sum.reads > 0 ? sum.lag_sum * 1000 / (double)sum.reads : 0, sum.rq_wait * 1000,
	       (unsigned long long)sum.nivcsw, sum.batch);
	*prev_bytes = sum.bytes;
}

static void
parse_opts(struct opts *o, int argc, char **argv)
{
	const char *host = "127.0.0.1", *port = "21";
	int c;

	memset(o, 0, sizeof(*o));
	o->n = 10;
	o->c = 10;
	o->secs = 10;
	o->rate = 3600;
	o->min_rate = 3000;
	o->packet = 1500;
	o->tgt.step_timeout = FB_DEFAULT_TIMEOUT;
	o->tgt.data_rcvbuf = DEFAULT_RCVBUF;
	while ((c = getopt(argc, argv, "h:H:P:n:c:t:b:B:u:p:f:m:j:T:r:CeEIv")) != -1) {
		switch (c) {
		case 'h': case 'H': host = optarg; break;
		case 'P': port = optarg; break;
		case 'n': o->n = (uint32_t)fb_opt_uint('n', optarg, 1, MAX_ROBOTS); break;
		case 'c': o->c = (uint32_t)fb_opt_uint('c', optarg, 1, MAX_ROBOTS); break;
		case 't': o->secs = fb_opt_secs('t', optarg); break;
		case 'b': o->rate = (uint32_t)fb_opt_uint('b', optarg, 1, 1u << 31); break;
		case 'B': o->min_rate = (uint32_t)fb_opt_uint('B', optarg, 0, 1u << 31); break;
		case 'u': o->tgt.user = optarg; break;
		case 'p': o->tgt.pass = optarg; break;
		case 'f': o->file = optarg; break;
		case 'm': o->packet = (uint32_t)fb_opt_uint('m', optarg, 1, 1u << 20); break;
		case 'j': o->j = (uint32_t)fb_opt_uint('j', optarg, 1, MAX_WORKERS); break;
		case 'T': o->tgt.step_timeout = fb_opt_secs('T', optarg); break;
		case 'e': o->tgt.epsv = 1; break;
		case 'E': o->tgt.tls = FB_TLS_EXPLICIT; break;
		case 'I': o->tgt.tls = FB_TLS_IMPLICIT; break;
		case 'r':
			o->tgt.data_rcvbuf = (int)fb_opt_uint('r', optarg, 0, 1u << 26);
			break;
		case 'v': o->verbose = 1; break;
		case 'C': o->classic = 1; break;
		default:
			die("robots: bad option (see ftpbench without arguments)");
		}
	}
	if (o->tgt.user == NULL || o->tgt.pass == NULL || o->file == NULL)
		die("robots: -u USER, -p PASS and -f FILE are required");
	if (strlen(o->file) >= FB_PATH_MAX || strlen(o->tgt.user) > 64 ||
	    strlen(o->tgt.pass) > 64)
		die("robots: file, user or password too long");
	fb_resolve(&o->tgt, host, port);
}

/* Enough workers that none needs more fds than the limit allows. */
static void
choose_workers(struct opts *o, uint64_t nofile)
{
	uint64_t per = nofile > WORKER_FD_SLACK ? (nofile - WORKER_FD_SLACK) / 2 : 0;
	uint64_t need;

	if (per == 0)
		die("RLIMIT_NOFILE %llu is too low", (unsigned long long)nofile);
	need = (o->n + per - 1) / per;
	if (need > MAX_WORKERS)
		die("-n %u needs %llu workers, at most %d", o->n,
		    (unsigned long long)need, MAX_WORKERS);
	if (o->j == 0)
		o->j = (uint32_t)need;
	if (o->j < need)
		die("-j %u: %u robots need 2 fds each, %llu per process: use -j %llu",
		    o->j, o->n, (unsigned long long)nofile, (unsigned long long)need);
	if (o->j > o->n)
		o->j = o->n;
}

static void
report_final(const struct opts *o, const struct wproc *w, double wall,
	     int lost_workers)
{
	struct rusage ru;
	struct wstat sum;
	double cpu;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t k;

	sum_stats(w, o->j, &sum);
	getrusage(RUSAGE_CHILDREN, &ru);
	cpu = fb_cpu_self() +
	      (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("users alive: %u\n", sum.alive);
	printf("users dead: %u (", sum.dead);
	for (k = 0; k < D_COUNT; k++)
		printf("%s%s %u", k > 0 ? ", " : "", death_names[k], sum.deaths[k]);
	printf(")\n");
	if (sum.pending + sum.connecting > 0)
		printf("users never logged in by the end: %u\n",
		       sum.pending + sum.connecting);
	printf("total bytes: %llu in %llu fetches\n",
	       (unsigned long long)sum.bytes, (unsigned long long)sum.fetches);
	printf("generator cpu: %.1f%% of one core (%.2f s in %.1f s, %u workers,"
	       " %ld cores)\n", 100.0 * cpu / wall, cpu, wall, o->j, ncpu);
	if (ncpu > 0 && cpu / wall > 0.9 * (double)ncpu)
		printf("WARNING: the generator used all cores; figures are its limit,"
		       " not the server's\n");
	if (lost_workers)
		printf("WARNING: %d worker(s) died; their last report is counted\n",
		       lost_workers);
	if (o->tgt.tls != FB_TLS_NONE)
		printf("tls: %llu data connections, %llu resumed the control session,"
		       " %llu ended without close_notify\n",
		       (unsigned long long)sum.tls_data,
		       (unsigned long long)sum.tls_resumed,
		       (unsigned long long)sum.tls_unclean);
	/*
	 * RESULT name value unit gen_cpu_pct slug wall_s users dead pending
	 * bytes fetches status
	 */
	printf("RESULT\tusers alive\t%u\tusers\t%.1f\trobots\t%.1f\t%u\t%u\t%u\t%llu"
	       "\t%llu\t%s\n", sum.alive, 100.0 * cpu / wall, wall, o->n, sum.dead,
	       sum.pending + sum.connecting, (unsigned long long)sum.bytes,
	       (unsigned long long)sum.fetches, lost_workers ? "FAIL:worker" : "ok");
}

int
robots_main(int argc, char **argv)
{
	struct opts o;
	struct wproc w[MAX_WORKERS];
	uint64_t nofile, prev_bytes = 0;
	uint32_t i, base = 0;
	double start, end, next_print;
	int lost = 0;

	parse_opts(&o, argc, argv);
	nofile = fb_raise_nofile();
	choose_workers(&o, nofile);
	signal(SIGPIPE, SIG_IGN);
	printf("robots: %u users, %u concurrent connects, %.0f s, %u B/s each"
	       " (min %u), %u B reads, %u workers\n", o.n, o.c, o.secs, o.rate,
	       o.min_rate, o.packet, o.j);
	fflush(stdout);
	start = fb_now();
	memset(w, 0, sizeof(w));
	for (i = 0; i < o.j; i++) {
		uint32_t n = o.n / o.j + (i < o.n % o.j);
		uint32_t c = o.c / o.j + (i < o.c % o.j);
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			die("pipe2: %s", strerror(errno));
		w[i].pid = fork();
		if (w[i].pid < 0)
			die("fork: %s", strerror(errno));
		if (w[i].pid == 0) {
			uint32_t k;

			close(p[0]);
			for (k = 0; k < i; k++)
				close(w[k].fd);
			worker_main(&o, i, base, n, c > 0 ? c : 1, p[1], start);
		}
		close(p[1]);
		w[i].fd = p[0];
		w[i].last.pending = n;
		base += n;
	}
	end = start + o.secs;
	next_print = start + 1.1;
	/* Bounded: past the end, workers get one step timeout to report. */
	while (!all_done(w, o.j) && fb_now() < end + o.tgt.step_timeout + 10) {
		double now = fb_now();

		drain_pipes(w, o.j, now < next_print ?
			    (int)((next_print - now) * 1000) + 1 : 0);
		if (fb_now() >= next_print && fb_now() < end) {
			print_progress(w, o.j, next_print - 0.1 - start, &prev_bytes);
			next_print += 1.0;
		}
	}
	for (i = 0; i < o.j; i++) {
		if (w[i].done != 1) {
			lost++;
			kill(w[i].pid, SIGKILL);
		}
		waitpid(w[i].pid, NULL, 0);
		close(w[i].fd);
	}
	report_final(&o, w, fb_now() - start, lost);
	return lost ? 1 : 0;
}
