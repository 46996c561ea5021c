/*
 * ftpbench suite: the classic pyftpdlib benchmark figures, under the
 * same names and with the same method, plus what that script lacks.
 *
 * Classic figures (names as pyftpdlib's bench prints them):
 *   STOR (client -> server)             one client uploads for about 1 s
 *   RETR (server -> client)             one client downloads for about 1 s
 *   N concurrent clients (connect, login)  N clients log in ONE AFTER
 *                                       ANOTHER and stay idle: login latency
 *   STOR/RETR (1 file with N idle clients)
 *   N concurrent clients (RETR S file)  the N idle clients each RETR
 *   N concurrent clients (STOR S file)  the N idle clients STOR one file
 *   N concurrent clients (QUIT)
 * Additions:
 *   N concurrent clients (STOR S file, distinct files)
 *   N concurrent clients (connect, login, all at once)
 * Next to each figure: the generator's own CPU (so a saturated generator
 * is not mistaken for a slow server) and, with -k, the memory of every
 * process of the server at the test's peak.
 *
 * Where this differs from the classic script, on purpose:
 *   - 1 MiB reads (MSG_TRUNC, no copy) and writes instead of 8 KiB;
 *   - every RETR is checked to deliver exactly SIZE bytes;
 *   - the concurrent STOR sends the full SIZE (the classic sends 5 MiB
 *     whatever its label says);
 *   - in the concurrent RETR/STOR each client runs TYPE/PASV/RETR on its
 *     own, at once, instead of the set-up being done one client at a time;
 *   - every step has a timeout.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procmem.h"
#include "src/common/util.h"

#define MIB (1024.0 * 1024.0)
/* No phase may outlast this even if every step keeps making progress. */
#define PHASE_MAX_SECS 3600.0
#define RETR_MAX_FETCHES 100000

enum bench_id {
	B_STOR, B_RETR, B_LOGIN, B_STOR_IDLE, B_RETR_IDLE, B_MULTI_RETR,
	B_MULTI_STOR, B_MULTI_STOR_DISTINCT, B_QUIT, B_LOGIN_ALL, B_COUNT
};

static const struct {
	const char *slug;
	int concurrence;	/* in the classic "concurrence" group */
} benches[B_COUNT] = {
	[B_STOR] = { "stor", 0 },
	[B_RETR] = { "retr", 0 },
	[B_LOGIN] = { "login", 1 },
	[B_STOR_IDLE] = { "stor-idle", 1 },
	[B_RETR_IDLE] = { "retr-idle", 1 },
	[B_MULTI_RETR] = { "multi-retr", 1 },
	[B_MULTI_STOR] = { "multi-stor", 1 },
	[B_MULTI_STOR_DISTINCT] = { "multi-stor-distinct", 1 },
	[B_QUIT] = { "quit", 1 },
	[B_LOGIN_ALL] = { "login-all", 1 },
};

enum sample_mode { SAMPLE_NONE, SAMPLE_FIRST_XFER, SAMPLE_ALL_STARTED };

struct suite {
	struct fb_target tgt;
	struct fb_loop L;
	uint32_t n;			/* -n: the idle/concurrent clients */
	uint32_t single, helper;	/* session indexes after the n */
	uint64_t size;
	pid_t kpid;
	int csv;
	unsigned sel;			/* bit per enum bench_id */
	char sizename[32];
	char dat[FB_PATH_MAX];		/* the SIZE file RETR reads */
	char stor1[FB_PATH_MAX];	/* the 1 s STOR target */
	char dir[FB_PATH_MAX / 2];
	int have_dat;
	int wrote_distinct;

	/* The phase in progress. */
	uint32_t pending, active, failed, started, ended_unstarted;
	const char *first_err;
	enum sample_mode sample_mode;
	int sampled;
	struct procmem base, peak;
	int have_base, have_peak;
	uint32_t peak_clients;		/* our sessions open at the peak */
	int any_failed;
	double sample_cpu;
	double t0, cpu0;
};

static void
on_done(struct fb_loop *L, struct sess *s, int result)
{
	struct suite *S = L->ctx;

	if (S->pending > 0)
		S->pending--;
	if (result != 1) {
		S->failed++;
		if (S->first_err == NULL)
			S->first_err = s->err != NULL ? s->err : "refused";
	}
	if (!s->xfer_started)
		S->ended_unstarted++;
}

static void
take_sample(struct suite *S)
{
	struct procmem m;
	double c0;

	if (S->kpid <= 0)
		return;
	c0 = fb_cpu_self();
	if (procmem_sample(S->kpid, &m) == 0 &&
	    (!S->have_peak || m.priv_kb > S->peak.priv_kb)) {
		uint32_t i;

		S->peak = m;
		S->have_peak = 1;
		S->peak_clients = 0;
		for (i = 0; i < S->L.n; i++)
			S->peak_clients += S->L.s[i].cfd >= 0;
	}
	/* Reading /proc is not load on the server: keep it out of our CPU. */
	S->sample_cpu += fb_cpu_self() - c0;
}

static void
on_xfer(struct fb_loop *L, struct sess *s)
{
	struct suite *S = L->ctx;

	(void)s;
	S->started++;
	if (S->sampled)
		return;
	if (S->sample_mode == SAMPLE_FIRST_XFER ||
	    (S->sample_mode == SAMPLE_ALL_STARTED &&
	     S->started + S->ended_unstarted >= S->active)) {
		S->sampled = 1;
		take_sample(S);
	}
}

static int
phase_over(struct fb_loop *L)
{
	struct suite *S = L->ctx;

	return S->pending == 0;
}

static void
phase_begin(struct suite *S, uint32_t active, enum sample_mode mode)
{
	S->pending = S->active = active;
	S->failed = S->started = S->ended_unstarted = 0;
	S->first_err = NULL;
	S->sample_mode = mode;
	S->sampled = 0;
}

/* Runs until every started operation ended; stragglers are cut off. */
static void
phase_wait(struct suite *S)
{
	uint32_t i;

	if (loop_run(&S->L, fb_now() + PHASE_MAX_SECS, phase_over) == 0)
		return;
	for (i = 0; i < S->L.n; i++) {
		struct sess *s = &S->L.s[i];

		if (s->state != SS_FREE && s->state != SS_IDLE) {
			sess_close(&S->L, s);
			S->failed++;
			S->first_err = "phase deadline";
		}
	}
	S->pending = 0;
}

static void
meas_begin(struct suite *S)
{
	S->t0 = fb_now();
	S->cpu0 = fb_cpu_self();
	S->sample_cpu = 0;
}

/* Each figure reports the peak of its own samples only. */
static void
figure_begin(struct suite *S)
{
	S->have_peak = 0;
	meas_begin(S);
}

static void
size_name(char *dst, size_t dstsz, uint64_t n)
{
	static const char sym[] = "KMGTPE";
	int i;

	/* pyftpdlib's bytes2human with "%(value).1f%(symbol)s". */
	for (i = 5; i >= 0; i--) {
		double unit = (double)(1ULL << (10 * (i + 1)));

		if ((double)n >= unit) {
			snprintf(dst, dstsz, "%.1f%c", (double)n / unit, sym[i]);
			return;
		}
	}
	snprintf(dst, dstsz, "%.1fB", (double)n);
}

/*
 * One table row and one machine-readable line per figure. The RESULT line
 * is tab-separated: RESULT name value unit gen_cpu_pct slug wall_s clients
 * srv_priv_kb srv_pss_kb srv_procs priv_kb_per_client pss_kb_per_client
 * status. Memory is the server's at this figure's peak, -1 without -k;
 * "per client" is the growth since the start of the run divided by the
 * sessions the generator had open at that moment (USS can shrink when a
 * fork shares pages, so it may be negative with very few clients).
 */
static void
report(struct suite *S, enum bench_id id, const char *name, double value,
       const char *unit, double wall, uint32_t clients)
{
	double cpu = fb_cpu_self() - S->cpu0 - S->sample_cpu;
	double pct = wall > 0 ? 100.0 * cpu / wall : 0;
	long long priv = -1, pss = -1, nprocs = -1;
	double per = -1, per_pss = -1;
	char status[96];

	if (S->failed > 0) {
		S->any_failed = 1;
		snprintf(status, sizeof(status), "FAIL:%u:%s", S->failed,
			 S->first_err != NULL ? S->first_err : "?");
		value = NAN;
	} else {
		snprintf(status, sizeof(status), "ok");
	}
	if (S->have_peak) {
		priv = (long long)S->peak.priv_kb;
		pss = (long long)S->peak.pss_kb;
		nprocs = S->peak.nprocs;
		if (S->have_base && S->peak_clients > 0) {
			per = ((double)S->peak.priv_kb - (double)S->base.priv_kb) /
			      S->peak_clients;
			per_pss = ((double)S->peak.pss_kb - (double)S->base.pss_kb) /
				  S->peak_clients;
		}
	}
	if (S->csv) {
		printf("\"%s\",%.3f,%s,%.1f,%s,%.4f,%u,%lld,%lld,%lld,%.1f,%.1f,"
		       "\"%s\"\n", name, value, unit, pct, benches[id].slug, wall,
		       clients, priv, pss, nprocs, per, per_pss, status);
		return;
	}
	printf("%-58s %9.2f %-6s cpu %5.1f%%", name, value, unit, pct);
	if (S->have_peak)
		printf("  mem %6.1fM priv %6.1fM pss %5lld procs, per client"
		       " %7.1fK priv %7.1fK pss", priv / 1024.0, pss / 1024.0,
		       nprocs, per, per_pss);
	if (S->failed > 0)
		printf("  %s", status);
	printf("\nRESULT\t%s\t%.3f\t%s\t%.1f\t%s\t%.4f\t%u\t%lld\t%lld\t%lld"
	       "\t%.1f\t%.1f\t%s\n", name, value, unit, pct, benches[id].slug,
	       wall, clients, priv, pss, nprocs, per, per_pss, status);
}

/* ---- building blocks ---- */

static int
login_one(struct suite *S, uint32_t i)
{
	phase_begin(S, 1, SAMPLE_NONE);
	sess_login(&S->L, &S->L.s[i]);
	phase_wait(S);
	return S->L.s[i].state == SS_IDLE ? 0 : -1;
}

static void
quit_quietly(struct suite *S, uint32_t i)
{
	struct sess *s = &S->L.s[i];

	if (s->state != SS_IDLE) {
		sess_close(&S->L, s);
		return;
	}
	phase_begin(S, 1, SAMPLE_NONE);
	sess_quit(&S->L, s);
	phase_wait(S);
	sess_close(&S->L, s);
}

/* One command on the helper session; its reply code, or -1. */
static int
helper_cmd(struct suite *S, const char *line)
{
	struct sess *s = &S->L.s[S->helper];

	if (s->state != SS_IDLE && login_one(S, S->helper) < 0)
		return -1;
	phase_begin(S, 1, SAMPLE_NONE);
	sess_cmd(&S->L, s, line);
	phase_wait(S);
	return s->state == SS_IDLE ? s->code : -1;
}

static int
upload_dat(struct suite *S)
{
	struct sess *s = &S->L.s[S->helper];

	if (S->have_dat)
		return 0;
	if (s->state != SS_IDLE && login_one(S, S->helper) < 0)
		return -1;
	phase_begin(S, 1, SAMPLE_NONE);
	sess_stor(&S->L, s, S->dat, S->size, 0);
	phase_wait(S);
	if (S->failed > 0) {
		fprintf(stderr, "ftpbench: cannot upload %s: %s\n", S->dat,
			S->first_err);
		return -1;
	}
	S->have_dat = 1;
	return 0;
}

static uint32_t
count_idle(struct suite *S)
{
	uint32_t i, k = 0;

	for (i = 0; i < S->n; i++)
		k += S->L.s[i].state == SS_IDLE;
	return k;
}

/* ---- the figures ---- */

/* Classic: bytes sent in about a second by one client, 1 MiB writes. */
static void
bench_stor(struct suite *S, enum bench_id id, const char *name)
{
	struct sess *s = &S->L.s[S->single];
	char line[FB_PATH_MAX + 8];
	double secs;

	figure_begin(S);
	if (login_one(S, S->single) < 0) {
		report(S, id, name, 0, "MB/sec", 0, 1);
		return;
	}
	phase_begin(S, 1, SAMPLE_FIRST_XFER);
	meas_begin(S);
	sess_stor(&S->L, s, S->stor1, 0, 1.0);
	phase_wait(S);
	/* From the 150 to the 226: includes the server draining its buffers. */
	secs = s->done_at - s->xfer_start;
	report(S, id, name, secs > 0 ? (double)s->bytes / MIB / secs : 0,
	       "MB/sec", fb_now() - S->t0, 1);
	quit_quietly(S, S->single);
	/* A second of upload can be gigabytes: do not keep it on the disk. */
	snprintf(line, sizeof(line), "DELE %s", S->stor1);
	helper_cmd(S, line);
}

/*
 * Classic: one client downloads for about a second, fetching the file
 * again at each end. Counted: RETR sent to the data connection's EOF of
 * each fetch; PASV and connect between fetches are not, as in the
 * classic. Every fetch must deliver exactly SIZE bytes.
 */
static void
bench_retr(struct suite *S, enum bench_id id, const char *name)
{
	struct sess *s = &S->L.s[S->single];
	double busy = 0;
	uint64_t total = 0;
	uint32_t fetches = 0, failed = 0;
	const char *err = NULL;

	figure_begin(S);
	if (upload_dat(S) < 0 || login_one(S, S->single) < 0) {
		report(S, id, name, 0, "MB/sec", 0, 1);
		return;
	}
	/* An untimed first fetch warms the cache and samples memory. */
	phase_begin(S, 1, SAMPLE_FIRST_XFER);
	sess_retr(&S->L, s, S->dat, (int64_t)S->size, 0, 0);
	phase_wait(S);
	if (S->failed > 0) {
		failed = S->failed;
		err = S->first_err;
	}
	meas_begin(S);
	while (failed == 0 && busy < 1.0 && fetches < RETR_MAX_FETCHES) {
		phase_begin(S, 1, SAMPLE_NONE);
		sess_retr(&S->L, s, S->dat, (int64_t)S->size, 0, 0);
		phase_wait(S);
		if (S->failed > 0) {
			failed = S->failed;
			err = S->first_err;
			break;
		}
		busy += s->eof_at - s->cmd_at;
		total += s->bytes;
		fetches++;
	}
	S->failed = failed;
	S->first_err = err;
	report(S, id, name, busy > 0 ? (double)total / MIB / busy : 0, "MB/sec",
	       fb_now() - S->t0, 1);
	quit_quietly(S, S->single);
}

/* Classic: the N clients log in one after another and stay logged in. */
static void
bench_login(struct suite *S, enum bench_id id, const char *name, int report_it)
{
	uint32_t i, failed = 0;
	const char *err = NULL;
	double wall;

	figure_begin(S);
	meas_begin(S);
	for (i = 0; i < S->n; i++) {
		if (login_one(S, i) < 0) {
			failed++;
			if (err == NULL)
				err = S->first_err;
		}
	}
	wall = fb_now() - S->t0;
	phase_begin(S, 0, SAMPLE_NONE);
	S->failed = failed;
	S->first_err = err;
	take_sample(S);
	if (report_it)
		report(S, id, name, wall, "secs", wall, S->n);
}

/* All N connect and log in at once; the phase ends with the last 230. */
static void
bench_login_all(struct suite *S, enum bench_id id, const char *name)
{
	uint32_t i;
	double wall;

	figure_begin(S);
	for (i = 0; i < S->n; i++)
		quit_quietly(S, i);
	phase_begin(S, S->n, SAMPLE_NONE);
	meas_begin(S);
	for (i = 0; i < S->n; i++)
		sess_login(&S->L, &S->L.s[i]);
	phase_wait(S);
	wall = fb_now() - S->t0;
	take_sample(S);
	report(S, id, name, wall, "secs", wall, S->n);
	phase_begin(S, count_idle(S), SAMPLE_NONE);
	for (i = 0; i < S->n; i++)
		if (S->L.s[i].state == SS_IDLE)
			sess_quit(&S->L, &S->L.s[i]);
	phase_wait(S);
}

/* The N idle clients each run one transfer at once. */
static void
bench_multi(struct suite *S, enum bench_id id, const char *name)
{
	uint32_t i, k = count_idle(S);
	double wall;

	figure_begin(S);
	if (id == B_MULTI_RETR && upload_dat(S) < 0) {
		report(S, id, name, 0, "secs", 0, k);
		return;
	}
	phase_begin(S, k, SAMPLE_ALL_STARTED);
	meas_begin(S);
	for (i = 0; i < S->n; i++) {
		struct sess *s = &S->L.s[i];
		char path[FB_PATH_MAX];

		if (s->state != SS_IDLE)
			continue;
		/* The classic sends TYPE I before every transfer. */
		s->typed = 0;
		if (id == B_MULTI_RETR) {
			sess_retr(&S->L, s, S->dat, (int64_t)S->size, 0, 0);
		} else if (id == B_MULTI_STOR) {
			sess_stor(&S->L, s, S->stor1, S->size, 0);
		} else {
			snprintf(path, sizeof(path), "%sftpbench.%u", S->dir, i);
			sess_stor(&S->L, s, path, S->size, 0);
		}
	}
	if (id == B_MULTI_STOR_DISTINCT)
		S->wrote_distinct = 1;
	phase_wait(S);
	wall = fb_now() - S->t0;
	report(S, id, name, wall, "secs", wall, k);
	if (S->failed > 0 && S->n - count_idle(S) > 0)
		fprintf(stderr, "ftpbench: %u of %u clients lost\n",
			S->n - count_idle(S), S->n);
}

static void
bench_quit(struct suite *S, enum bench_id id, const char *name)
{
	uint32_t i, k = count_idle(S);
	double wall;

	figure_begin(S);
	phase_begin(S, k, SAMPLE_NONE);
	meas_begin(S);
	for (i = 0; i < S->n; i++)
		if (S->L.s[i].state == SS_IDLE)
			sess_quit(&S->L, &S->L.s[i]);
	phase_wait(S);
	wall = fb_now() - S->t0;
	report(S, id, name, wall, "secs", wall, k);
}

static void
cleanup(struct suite *S)
{
	char line[FB_PATH_MAX + 8];
	uint32_t i;

	if (S->have_dat) {
		snprintf(line, sizeof(line), "DELE %s", S->dat);
		helper_cmd(S, line);
	}
	if (S->sel & ((1u << B_MULTI_STOR) | (1u << B_STOR))) {
		snprintf(line, sizeof(line), "DELE %s", S->stor1);
		helper_cmd(S, line);
	}
	for (i = 0; S->wrote_distinct && i < S->n; i++) {
		snprintf(line, sizeof(line), "DELE %sftpbench.%u", S->dir, i);
		helper_cmd(S, line);
	}
	quit_quietly(S, S->helper);
}

/*
 * What TLS the run used, and whether the data connections resumed the
 * control session (a server requiring reuse refuses those that do not).
 * TLS line: TLS version cipher data_conns resumed unclean_eof.
 */
static void
report_tls(struct suite *S)
{
	const struct fb_tls_stats *t = &S->L.tls_stats;

	if (!S->csv)
		printf("tls: %s %s; %llu data connections, %llu resumed the control"
		       " session, %llu ended without close_notify\n",
		       t->version[0] ? t->version : "-", t->cipher[0] ? t->cipher : "-",
		       (unsigned long long)t->data_conns,
		       (unsigned long long)t->data_resumed,
		       (unsigned long long)t->unclean_eof);
	printf("TLS\t%s\t%s\t%llu\t%llu\t%llu\n", t->version[0] ? t->version : "-",
	       t->cipher[0] ? t->cipher : "-", (unsigned long long)t->data_conns,
	       (unsigned long long)t->data_resumed, (unsigned long long)t->unclean_eof);
}

static unsigned
parse_selection(const char *arg)
{
	char buf[512], *save = NULL, *tok;
	unsigned sel = 0;
	int i;

	if (tw_strlcpy(buf, arg, sizeof(buf)) < 0)
		die("-b: list too long");
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned before = sel;

		for (i = 0; i < B_COUNT; i++) {
			if (strcmp(tok, "all") == 0 ||
			    strcmp(tok, benches[i].slug) == 0 ||
			    (strcmp(tok, "transfer") == 0 && !benches[i].concurrence) ||
			    (strcmp(tok, "concurrence") == 0 && benches[i].concurrence))
				sel |= 1u << i;
		}
		if (sel == before)
			die("-b: unknown benchmark \"%s\" (all, transfer, concurrence,"
			    " stor, retr, login, stor-idle, retr-idle, multi-retr,"
			    " multi-stor, multi-stor-distinct, quit, login-all)", tok);
	}
	return sel;
}

static void
suite_run(struct suite *S)
{
	const unsigned need_idle = (1u << B_STOR_IDLE) | (1u << B_RETR_IDLE) |
	    (1u << B_MULTI_RETR) | (1u << B_MULTI_STOR) |
	    (1u << B_MULTI_STOR_DISTINCT) | (1u << B_QUIT);
	char name[128];
	uint32_t n = S->n;

	if (S->kpid > 0) {
		if (procmem_sample(S->kpid, &S->base) < 0)
			die("-k %d: no such process", (int)S->kpid);
		S->have_base = 1;
		if (!S->csv)
			printf("server memory at start: %.1fM priv %.1fM pss, %u procs\n",
			       S->base.priv_kb / 1024.0, S->base.pss_kb / 1024.0,
			       S->base.nprocs);
	}
	if (S->csv)
		printf("name,value,unit,gen_cpu_pct,slug,wall_s,clients,srv_priv_kb,"
		       "srv_pss_kb,srv_procs,priv_kb_per_client,pss_kb_per_client,"
		       "status\n");
	if (S->sel & (1u << B_STOR))
		bench_stor(S, B_STOR, "STOR (client -> server)");
	if (S->sel & (1u << B_RETR))
		bench_retr(S, B_RETR, "RETR (server -> client)");
	if (S->sel & ((1u << B_LOGIN) | need_idle)) {
		snprintf(name, sizeof(name), "%u concurrent clients (connect, login)", n);
		bench_login(S, B_LOGIN, name, (S->sel & (1u << B_LOGIN)) != 0);
	}
	if (S->sel & (1u << B_STOR_IDLE)) {
		snprintf(name, sizeof(name), "STOR (1 file with %u idle clients)", n);
		bench_stor(S, B_STOR_IDLE, name);
	}
	if (S->sel & (1u << B_RETR_IDLE)) {
		snprintf(name, sizeof(name), "RETR (1 file with %u idle clients)", n);
		bench_retr(S, B_RETR_IDLE, name);
	}
	if (S->sel & (1u << B_MULTI_RETR)) {
		snprintf(name, sizeof(name), "%u concurrent clients (RETR %s file)", n,
			 S->sizename);
		bench_multi(S, B_MULTI_RETR, name);
	}
	if (S->sel & (1u << B_MULTI_STOR)) {
		snprintf(name, sizeof(name), "%u concurrent clients (STOR %s file)", n,
			 S->sizename);
		bench_multi(S, B_MULTI_STOR, name);
	}
	if (S->sel & (1u << B_MULTI_STOR_DISTINCT)) {
		snprintf(name, sizeof(name),
			 "%u concurrent clients (STOR %s file, distinct files)", n,
			 S->sizename);
		bench_multi(S, B_MULTI_STOR_DISTINCT, name);
	}
	if (S->sel & (1u << B_QUIT)) {
		snprintf(name, sizeof(name), "%u concurrent clients (QUIT)", n);
		bench_quit(S, B_QUIT, name);
	}
	if (S->sel & (1u << B_LOGIN_ALL)) {
		snprintf(name, sizeof(name),
			 "%u concurrent clients (connect, login, all at once)", n);
		bench_login_all(S, B_LOGIN_ALL, name);
	}
	cleanup(S);
}

int
suite_main(int argc, char **argv)
{
	static struct suite S;
	const char *host = "127.0.0.1", *port = "21", *dir = NULL;
	uint64_t nofile;
	int c;

	S.n = 300;
	S.size = 10 * 1024 * 1024;
	S.sel = (1u << B_COUNT) - 1;
	S.tgt.step_timeout = FB_DEFAULT_TIMEOUT;
	S.tgt.user = S.tgt.pass = NULL;
	while ((c = getopt(argc, argv, "h:H:P:u:p:n:b:s:k:d:t:eEIo:")) != -1) {
		switch (c) {
		case 'h': case 'H': host = optarg; break;
		case 'P': port = optarg; break;
		case 'u': S.tgt.user = optarg; break;
		case 'p': S.tgt.pass = optarg; break;
		case 'n': S.n = (uint32_t)fb_opt_uint('n', optarg, 1, 1000000); break;
		case 'b': S.sel = parse_selection(optarg); break;
		case 's':
			if (fb_parse_size(optarg, &S.size) < 0 || S.size == 0)
				die("-s: want a size like 10M, got \"%s\"", optarg);
			break;
		case 'k': S.kpid = (pid_t)fb_opt_uint('k', optarg, 1, 1 << 30); break;
		case 'd': dir = optarg; break;
		case 't': S.tgt.step_timeout = fb_opt_secs('t', optarg); break;
		case 'e': S.tgt.epsv = 1; break;
		case 'E': S.tgt.tls = FB_TLS_EXPLICIT; break;
		case 'I': S.tgt.tls = FB_TLS_IMPLICIT; break;
		case 'o':
			if (strcmp(optarg, "csv") == 0)
				S.csv = 1;
			else if (strcmp(optarg, "table") != 0)
				die("-o: table or csv");
			break;
		default:
			die("suite: bad option (see ftpbench without arguments)");
		}
	}
	if (S.tgt.user == NULL || S.tgt.pass == NULL)
		die("suite: -u USER and -p PASS are required");
	if (strlen(S.tgt.user) > 64 || strlen(S.tgt.pass) > 64)
		die("suite: user or password longer than 64 bytes");
	if (dir != NULL && tw_snprintf(S.dir, sizeof(S.dir), "%s/", dir) < 0)
		die("-d: directory name too long");
	snprintf(S.dat, sizeof(S.dat), "%sftpbench.dat", S.dir);
	snprintf(S.stor1, sizeof(S.stor1), "%sftpbench.stor", S.dir);
	size_name(S.sizename, sizeof(S.sizename), S.size);
	fb_resolve(&S.tgt, host, port);
	nofile = fb_raise_nofile();
	/* Each client holds a control and, in a transfer, a data socket. */
	if ((uint64_t)S.n * 2 + 64 > nofile)
		die("-n %u needs %llu fds, the limit is %llu", S.n,
		    (unsigned long long)S.n * 2 + 64, (unsigned long long)nofile);
	S.single = S.n;
	S.helper = S.n + 1;
	loop_init(&S.L, &S.tgt, S.n + 2);
	S.L.ctx = &S;
	S.L.on_done = on_done;
	S.L.on_xfer = on_xfer;
	suite_run(&S);
	if (S.tgt.tls != FB_TLS_NONE)
		report_tls(&S);
	loop_free(&S.L);
	return S.any_failed ? 1 : 0;
}
