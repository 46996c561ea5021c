/*
 * Directory listings: LIST (`ls -l` lines), NLST (names) and MLSD
 * (RFC 3659 facts) over the data connection, and STAT <path>, which sends
 * a LIST listing inside a 213 reply on the control connection (RFC 959).
 * Generated here from stat(2), without running any program; the line
 * formats are src/proto/listing.c's.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/monotime.h"
#include "src/common/runtime.h"
#include "src/data.h"
#include "src/proto/ftpparse.h"
#include "src/proto/listing.h"
#include "src/proto/namefilter.h"
#include "src/worker.h"

#define LIST_MAX_ENTRIES (1u << 20)	/* bound on one directory listing */
/*
 * ls_recurse_enable: a few bytes of LIST -R at the top of a large tree
 * ask for a walk of all of it (vsftpd's man page calls it a security
 * risk for that reason): depth, entries and time are bounded.
 */
#define LIST_RECURSE_MAX_DEPTH 32
#define LIST_RECURSE_MAX_ENTRIES 50000u
#define LIST_RECURSE_MAX_MS (30 * 1000)
#define LIST_NAMES_FIRST_CAP 256	/* names array before it grows */
#define LIST_OUT_BUF (64 * 1024)	/* lines gathered per write */
/* A LIST line: fields, the name and a symlink's target. */
#define LIST_LINE_MAX (PATH_MAX * 2 + 256)
#define CRLF_LEN 2

/* Where the listing's lines go. */
enum list_dest {
	LIST_TO_DATA,		/* LIST, NLST, MLSD */
	LIST_TO_CTRL,		/* STAT <path> */
};

/* The listing's lines, gathered into LIST_OUT_BUF-sized writes. */
struct list_out {
	enum list_dest dest;
	struct session *s;
	struct xfer *x;		/* LIST_TO_DATA: the open transfer */
	char *buf;
	size_t len, cap;
	enum xfer_status rc;	/* the first write failure ends the listing */
	/* A recursive listing's progress against its bounds. */
	unsigned entries;
	long long deadline_ms;
	int cut;		/* a bound was reached: the listing is incomplete */
};

/* What one listing shows, fixed by the command and its arguments. */
struct list_job {
	enum list_mode mode;
	int show_dot_files;	/* MLSD always; LIST and NLST with -a or force_dot_files */
	int recursive;		/* -R with ls_recurse_enable */
	const char *hide_file;	/* the names a directory's listing leaves out */
	const char *deny_file;	/* the subdirectories -R does not enter */
	int can_write;		/* for MLSD's perm fact */
	struct list_opts lo;
};

static void
out_flush(struct list_out *o)
{
	if (o->len == 0 || o->rc != XFER_OK)
		return;
	if (o->dest == LIST_TO_DATA)
		o->rc = xfer_write_all(o->x, o->buf, o->len);
	else
		ctrl_write(&o->s->ctrl, o->buf, o->len);
	o->len = 0;
}

/*
 * Adds one line and its CRLF; a line longer than the buffer is dropped.
 * Every line of every listing passes here, so this is where a CR or LF
 * from a file name (or a symlink's target) is scrubbed: on the data
 * connection it would add a bogus entry, inside STAT's reply a fake
 * reply line.
 */
static void
out_line(struct list_out *o, const char *line, size_t n)
{
	if (o->len + n + CRLF_LEN > o->cap)
		out_flush(o);
	if (o->rc != XFER_OK || o->len + n + CRLF_LEN > o->cap)
		return;
	memcpy(o->buf + o->len, line, n);
	list_scrub_line(o->buf + o->len, n);
	o->len += n;
	o->buf[o->len++] = '\r';
	o->buf[o->len++] = '\n';
}

static void
emit_mlst(struct list_out *o, const struct list_job *job, const char *name,
	  const struct stat *st, enum mlst_kind kind)
{
	char line[LIST_LINE_MAX];
	int n = list_format_mlst(line, sizeof(line), name, st, kind, o->s->mlst_facts,
				 job->can_write);

	if (n > 0)
		out_line(o, line, (size_t)n);
}

static void
emit_long(struct list_out *o, const struct list_job *job, const char *path,
	  const char *name, const struct stat *st)
{
	char line[LIST_LINE_MAX], target[PATH_MAX];
	ssize_t tl = -1;
	int n;

	if (S_ISLNK(st->st_mode)) {
		tl = readlink(path, target, sizeof(target) - 1);
		if (tl >= 0)
			target[tl] = '\0';
	}
	n = list_format_long(line, sizeof(line), name, st, tl >= 0 ? target : NULL, &job->lo);
	if (n > 0)
		out_line(o, line, (size_t)n);
}

/* One entry: path is where it is (for stat), name what the listing shows. */
static void
emit_entry(struct list_out *o, const struct list_job *job, const char *path,
	   const char *name)
{
	struct stat st, target;

	if (job->mode == LISTMODE_NLST) {
		out_line(o, name, strlen(name));
		return;
	}
	if (lstat(path, &st) != 0)
		return;
	if (job->mode == LISTMODE_LIST) {
		emit_long(o, job, path, name, &st);
		return;
	}
	/* MLSD describes what a name leads to: follow symlinks. */
	if (S_ISLNK(st.st_mode) && stat(path, &target) == 0)
		st = target;
	emit_mlst(o, job, name, &st, MLST_KIND_ENTRY);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names in dir that the listing shows, sorted (like ls), at most
 * LIST_MAX_ENTRIES; as many as memory allowed. The caller frees them.
 */
static size_t
read_names(DIR *d, const struct list_job *job, char ***names_out)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	while ((de = readdir(d)) != NULL && n < LIST_MAX_ENTRIES) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_name[0] == '.' && !job->show_dot_files)
			continue;
		if (namefilter_match_name(job->hide_file, de->d_name, strlen(de->d_name)))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : LIST_NAMES_FIRST_CAP;
			char **nn = realloc(names, ncap * sizeof(*names));

			if (nn == NULL)
				break;
			names = nn;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (names[n] == NULL)
			break;
		n++;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	*names_out = names;
	return n;
}

/* Whether a recursive listing may go on; marks it cut when not. */
static int
walk_ok(struct list_out *o)
{
	if (o->cut)
		return 0;
	if (o->entries >= LIST_RECURSE_MAX_ENTRIES || tw_mono_ms() > o->deadline_ms)
		o->cut = 1;
	return !o->cut;
}

static void emit_dir(struct list_out *o, const struct list_job *job, const char *dir,
		     unsigned depth);

/*
 * After a directory's entries, each real subdirectory (a symbolic link
 * is not followed: no loops) under a blank line, as vsftpd does.
 */
static void
emit_subdirs(struct list_out *o, const struct list_job *job, const char *dir,
	     char **names, size_t n, unsigned depth)
{
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < n && o->rc == XFER_OK; i++) {
		if (ftp_path_join(dir, names[i], path, sizeof(path)) < 0 ||
		    lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
		    namefilter_match_name(job->deny_file, names[i], strlen(names[i])))
			continue;
		if (depth >= LIST_RECURSE_MAX_DEPTH || !walk_ok(o)) {
			o->cut = 1;
			return;
		}
		out_line(o, "", 0);
		emit_dir(o, job, path, depth + 1);
	}
}

static void
emit_dir(struct list_out *o, const struct list_job *job, const char *dir, unsigned depth)
{
	DIR *d = opendir(dir);
	char **names, path[PATH_MAX];
	size_t n, i;
	int in_cwd = strcmp(dir, ".") == 0;

	if (d == NULL)
		return;
	if (job->recursive) {
		int hl = snprintf(path, sizeof(path), "%s:", dir);

		if (hl > 0 && (size_t)hl < sizeof(path))
			out_line(o, path, (size_t)hl);
	}
	if (job->mode == LISTMODE_MLSD) {
		struct stat st;

		if (stat(dir, &st) == 0)
			emit_mlst(o, job, ".", &st, MLST_KIND_CDIR);
	}
	n = read_names(d, job, &names);
	closedir(d);
	for (i = 0; i < n; i++) {
		if (job->recursive && !walk_ok(o))
			break;
		if (o->rc == XFER_OK &&
		    (in_cwd || ftp_path_join(dir, names[i], path, sizeof(path)) >= 0))
			emit_entry(o, job, in_cwd ? names[i] : path, names[i]);
		o->entries++;
	}
	if (job->recursive && !o->cut)
		emit_subdirs(o, job, dir, names, n, depth);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * The path the listing's argument names; replies (missing_code when the
 * path does not exist) and returns NULL when there is nothing to list.
 */
static const char *
list_path(struct session *s, const char *arg, struct list_job *job, int missing_code,
	  int *is_dir)
{
	const char *path;
	struct stat st;

	if (!s->cfg->dirlist_enable) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return NULL;
	}
	if (job->mode == LISTMODE_MLSD) {
		path = arg;
		job->show_dot_files = 1;
	} else {
		unsigned flags;

		/* The path after ls's options: "LIST -la ~bob" too. */
		path = cmd_tilde_path(s, (char *)ftp_list_args(arg, &flags));
		job->show_dot_files = (flags & FTP_LIST_ALL) != 0 || s->cfg->force_dot_files;
		job->recursive = (flags & FTP_LIST_RECURSIVE) && s->cfg->ls_recurse_enable;
	}
	if (path[0] == '\0')
		path = ".";
	if (ftp_path_ok(path) == 0 && data_path_denied(s, path)) {
		ctrl_reply(&s->ctrl, 550, "Permission denied.");
		return NULL;
	}
	if (ftp_path_ok(path) != 0 || stat(path, &st) != 0) {
		ctrl_reply(&s->ctrl, missing_code, "No such file or directory.");
		return NULL;
	}
	*is_dir = S_ISDIR(st.st_mode);
	if (job->mode == LISTMODE_MLSD && !*is_dir) {
		ctrl_reply(&s->ctrl, 501, "MLSD needs a directory.");
		return NULL;
	}
	return path;
}

static void
list_job_init(struct list_job *job, const struct session *s, enum list_mode mode)
{
	memset(job, 0, sizeof(*job));
	job->mode = mode;
	job->can_write = s->cfg->write_enable && !s->anonymous;
	job->hide_file = s->cfg->hide_file;
	job->deny_file = s->cfg->deny_file;
	job->lo.hide_ids = s->cfg->hide_ids;
	job->lo.id_name = s->cfg->text_userdb_names ? tw_rt_id_name : NULL;
	job->lo.use_localtime = s->cfg->use_localtime;
	job->lo.now = time(NULL);	/* the wall clock: ls -l's "recent file" rule */
}

int
data_path_denied(const struct session *s, const char *path)
{
	return namefilter_match_path(s->cfg->deny_file, path);
}

/* Replies 451 and returns -1 when there is no memory for the lines. */
static int
list_out_init(struct list_out *o, struct session *s, enum list_dest dest)
{
	memset(o, 0, sizeof(*o));
	o->dest = dest;
	o->s = s;
	o->cap = LIST_OUT_BUF;
	o->deadline_ms = tw_mono_ms() + LIST_RECURSE_MAX_MS;
	o->buf = malloc(o->cap);
	if (o->buf == NULL) {
		ctrl_reply(&s->ctrl, 451, "Out of memory.");
		return -1;
	}
	return 0;
}

/*
 * Everything before the first line: the job, the path and the output
 * buffer. Returns the path, or NULL after a reply.
 */
static const char *
list_begin(struct session *s, const char *arg, enum list_mode mode, enum list_dest dest,
	   struct list_job *job, struct list_out *o, int *is_dir)
{
	/* RFC 959 gives STAT 450 for a file that is not there. */
	int missing_code = dest == LIST_TO_CTRL ? 450 : 550;
	const char *path;

	list_job_init(job, s, mode);
	path = list_path(s, arg, job, missing_code, is_dir);
	if (path == NULL || list_out_init(o, s, dest) != 0)
		return NULL;
	return path;
}

/* Whether a recursive listing stopped at a bound; logged once if so. */
static int
list_cut(struct session *s, const struct list_out *o, const char *path)
{
	if (!o->cut)
		return 0;
	worker_log(s, "recursive listing of %s stopped at its bound after %u entries", path,
		   o->entries);
	return 1;
}

static void
list_emit(struct list_out *o, const struct list_job *job, const char *path, int is_dir)
{
	if (is_dir)
		emit_dir(o, job, path, 0);
	else
		emit_entry(o, job, path, path);
	out_flush(o);
	free(o->buf);
	o->buf = NULL;
	/* A deep walk dirtied up to ~8 KB of stack per level: give it back. */
	if (job->recursive)
		tw_stack_trim();
}

void
data_cmd_list(struct session *s, const char *arg, enum list_mode mode)
{
	struct list_job job;
	struct list_out o;
	struct xfer x;
	const char *path;
	int is_dir;

	path = list_begin(s, arg, mode, LIST_TO_DATA, &job, &o, &is_dir);
	if (path == NULL)
		return;
	if (xfer_open(&x, s) != 0) {
		free(o.buf);
		return;
	}
	ctrl_reply(&s->ctrl, 150, "Here comes the directory listing.");
	o.x = &x;
	list_emit(&o, &job, path, is_dir);
	o.rc = xfer_end(&x, o.rc);
	if (o.rc == XFER_OK && list_cut(s, &o, path))
		ctrl_reply(&s->ctrl, 451, "Recursive listing stopped at the server's bound "
			   "(%d levels, %u entries, %d seconds); list the rest directory by "
			   "directory.", LIST_RECURSE_MAX_DEPTH, LIST_RECURSE_MAX_ENTRIES,
			   LIST_RECURSE_MAX_MS / 1000);
	else
		xfer_reply(s, o.rc, "Directory send OK.");
}

void
data_cmd_stat_list(struct session *s, const char *arg)
{
	struct list_out o;
	struct list_job job;
	int is_dir;
	const char *path = list_begin(s, arg, LISTMODE_LIST, LIST_TO_CTRL, &job, &o, &is_dir);

	if (path == NULL)
		return;
	ctrl_reply_cont(&s->ctrl, 213, "Status follows:");
	list_emit(&o, &job, path, is_dir);
	if (list_cut(s, &o, path))
		ctrl_reply(&s->ctrl, 213, "End of status (the recursive listing stopped at "
			   "the server's bound)");
	else
		ctrl_reply(&s->ctrl, 213, "End of status");
}
