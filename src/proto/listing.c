/*
 * Directory listing formatters. The LIST layout copies vsftpd's byte for
 * byte, because that is the layout client-side parsers (lftp, curl,
 * ftputil, FileZilla) have been tested against for two decades:
 *
 *   "%s %4u %-8s %-8s %8llu %s %s" — mode, links, owner, group, size,
 *   date ("Mon DD HH:MM" or "Mon DD  YYYY"), name.
 *
 * Month names come from our own table, not strftime, so a locale can
 * never change what clients have to parse.
 */
#include "src/proto/listing.h"
#include "src/common/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

/*
 * GNU ls: a file is "recent" within half an average Gregorian year
 * (365.2425 days / 2, in seconds).
 */
#define LIST_RECENT_SECS ((time_t)15778476)

static const char month_names[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static char
type_char(mode_t m)
{
	if (S_ISDIR(m))
		return 'd';
	if (S_ISLNK(m))
		return 'l';
	if (S_ISCHR(m))
		return 'c';
	if (S_ISBLK(m))
		return 'b';
	if (S_ISFIFO(m))
		return 'p';
	if (S_ISSOCK(m))
		return 's';
	return '-';
}

/* One rwx triplet; special is the setuid/setgid/sticky bit for its x. */
static void
perm_triplet(char *p, mode_t m, mode_t r, mode_t w, mode_t x, mode_t special,
	     char set_exec, char set_noexec)
{
	p[0] = (m & r) ? 'r' : '-';
	p[1] = (m & w) ? 'w' : '-';
	if (m & special)
		p[2] = (m & x) ? set_exec : set_noexec;
	else
		p[2] = (m & x) ? 'x' : '-';
}

static void
mode_string(char out[11], mode_t m)
{
	out[0] = type_char(m);
	perm_triplet(out + 1, m, S_IRUSR, S_IWUSR, S_IXUSR, S_ISUID, 's', 'S');
	perm_triplet(out + 4, m, S_IRGRP, S_IWGRP, S_IXGRP, S_ISGID, 's', 'S');
	perm_triplet(out + 7, m, S_IROTH, S_IWOTH, S_IXOTH, S_ISVTX, 't', 'T');
	out[10] = '\0';
}

/* Whether a name can stand in a column that clients split at blanks. */
static int
id_name_ok(const char *name)
{
	size_t n = 0;

	for (; name[n] != '\0'; n++)
		if ((unsigned char)name[n] <= ' ' || name[n] == 0x7f || n >= LIST_ID_NAME_MAX)
			return 0;
	return n > 0;
}

/* Owner or group column text. */
static void
id_string(char *out, size_t cap, unsigned id, int is_group, const struct list_opts *o)
{
	const char *name = o->id_name != NULL ? o->id_name(id, is_group) : NULL;

	if (o->hide_ids)
		(void)tw_strlcpy(out, "ftp", cap);
	else if (name != NULL && id_name_ok(name))
		(void)tw_strlcpy(out, name, cap);
	else
		(void)tw_snprintf(out, cap, "%u", id);
}

/* Size column text; devices show "major, minor" as ls does. */
static void
size_string(char *out, size_t cap, const struct stat *st)
{
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		(void)tw_snprintf(out, cap, "%u, %3u", major(st->st_rdev),
		    minor(st->st_rdev));
	else
		(void)tw_snprintf(out, cap, "%llu",
		    (unsigned long long)(st->st_size < 0 ? 0 : st->st_size));
}

/*
 * "Mon DD HH:MM" for recent files, else "Mon DD  YYYY". Files dated in the
 * future show the year too, so a wrong clock is visible.
 */
static int
date_string(char *out, size_t cap, time_t t, const struct list_opts *o)
{
	struct tm tm;
	int recent;

	if ((o->use_localtime ? localtime_r(&t, &tm) : gmtime_r(&t, &tm)) == NULL)
		return -1;
	if (tm.tm_mon < 0 || tm.tm_mon > 11)
		return -1;
	/*
	 * With t <= now the true difference fits in 64 unsigned bits, so this
	 * cannot overflow for any mtime a file system hands us.
	 */
	recent = t <= o->now &&
	    (uint64_t)o->now - (uint64_t)t <= (uint64_t)LIST_RECENT_SECS;
	if (recent)
		return tw_snprintf(out, cap, "%s %02d %02d:%02d",
		    month_names[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min);
	return tw_snprintf(out, cap, "%s %02d  %d", month_names[tm.tm_mon],
	    tm.tm_mday, tm.tm_year + 1900);
}

int
list_format_long(char *buf, size_t cap, const char *name,
		 const struct stat *st, const char *link_target,
		 const struct list_opts *o)
{
	char mode[11], owner[LIST_ID_NAME_MAX + 1], group[LIST_ID_NAME_MAX + 1];
	char size[48], date[48];

	mode_string(mode, st->st_mode);
	id_string(owner, sizeof(owner), (unsigned)st->st_uid, 0, o);
	id_string(group, sizeof(group), (unsigned)st->st_gid, 1, o);
	size_string(size, sizeof(size), st);
	/* An mtime gmtime cannot express must not hide the file. */
	if (date_string(date, sizeof(date), st->st_mtime, o) == -1)
		(void)tw_strlcpy(date, "Jan 01  1970", sizeof(date));
	return tw_snprintf(buf, cap, "%s %4lu %-8s %-8s %8s %s %s%s%s", mode,
	    (unsigned long)st->st_nlink, owner, group, size, date, name,
	    link_target != NULL ? " -> " : "",
	    link_target != NULL ? link_target : "");
}

void
list_scrub_line(char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf[i] == '\r' || buf[i] == '\n')
			buf[i] = LIST_NAME_SUBST;
}

/* Facts in the order they are emitted, named as RFC 3659 spells them. */
static const struct {
	unsigned bit;
	const char *name;
} mlst_facts[] = {
	{ MLST_TYPE, "type" },
	{ MLST_SIZE, "size" },
	{ MLST_MODIFY, "modify" },
	{ MLST_PERM, "perm" },
	{ MLST_UNIQUE, "unique" },
	{ MLST_UNIX_MODE, "UNIX.mode" },
};

/* A bounded appender: once something does not fit, the result is -1. */
struct outbuf {
	char *p;
	size_t cap, len;
	int overflow;
};

static void __attribute__((format(printf, 2, 3)))
ob_printf(struct outbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->overflow = 1;
		return;
	}
	b->len += (size_t)n;
}

static int
ob_result(struct outbuf *b)
{
	if (b->overflow || b->len > (size_t)0x7fffffff)
		return -1;
	return (int)b->len;
}

static const char *
mlst_type(const struct stat *st, enum mlst_kind kind)
{
	if (kind == MLST_KIND_CDIR)
		return "cdir";
	if (kind == MLST_KIND_PDIR)
		return "pdir";
	if (S_ISREG(st->st_mode))
		return "file";
	if (S_ISDIR(st->st_mode))
		return "dir";
	/* RFC 3659 7.5.1.4: an OS-specific type for everything else. */
	return "OS.unix=special";
}

/*
 * The perm fact is a hint for the client, not an access check (the
 * server enforces the real rules when the command comes). We read the
 * owner bits, as the session normally lists its own files, and only offer
 * modifying actions when the session may write at all:
 *   files:       r if owner-readable; w a d f if can_write and
 *                owner-writable.
 *   directories: e l always; c m p d f if can_write and owner-writable.
 */
static const char *
mlst_perm(const struct stat *st, int is_dir, int can_write)
{
	int writable = can_write && (st->st_mode & S_IWUSR);
	int readable = (st->st_mode & S_IRUSR) != 0;

	if (is_dir)
		return writable ? "elcmpdf" : "el";
	if (readable)
		return writable ? "rwadf" : "r";
	return writable ? "wadf" : "";
}

int
list_format_mlst(char *buf, size_t cap, const char *name,
		 const struct stat *st, enum mlst_kind kind,
		 unsigned facts, int can_write)
{
	struct outbuf b = { buf, cap, 0, 0 };
	int is_dir = kind != MLST_KIND_ENTRY || S_ISDIR(st->st_mode);
	char mtime[32];

	if (cap == 0)
		return -1;
	buf[0] = '\0';
	if (facts & MLST_TYPE)
		ob_printf(&b, "type=%s;", mlst_type(st, kind));
	if ((facts & MLST_SIZE) && kind == MLST_KIND_ENTRY &&
	    S_ISREG(st->st_mode))
		ob_printf(&b, "size=%llu;",
		    (unsigned long long)(st->st_size < 0 ? 0 : st->st_size));
	/* A time outside 4-digit years cannot be written: leave it out. */
	if ((facts & MLST_MODIFY) &&
	    list_format_mdtm(mtime, sizeof(mtime), st->st_mtime, 0) != -1)
		ob_printf(&b, "modify=%s;", mtime);
	if (facts & MLST_PERM)
		ob_printf(&b, "perm=%s;", mlst_perm(st, is_dir, can_write));
	if (facts & MLST_UNIQUE)
		ob_printf(&b, "unique=%llxg%llx;", (unsigned long long)st->st_dev,
		    (unsigned long long)st->st_ino);
	if (facts & MLST_UNIX_MODE)
		ob_printf(&b, "UNIX.mode=%04o;", (unsigned)(st->st_mode & 07777));
	ob_printf(&b, " %s", name);
	return ob_result(&b);
}

/* Case-insensitive compare of the n bytes at s with the whole of name. */
static int
fact_eq(const char *s, size_t n, const char *name)
{
	size_t i;

	if (strlen(name) != n)
		return 0;
	for (i = 0; i < n; i++) {
		char a = s[i], c = name[i];

		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (a != c)
			return 0;
	}
	return 1;
}

/*
 * When the reply form does not fit in out (callers pass 64 bytes or
 * more; the longest form is 40), out is left empty but the mask is still
 * returned.
 */
unsigned
list_parse_mlst_opts(const char *arg, char *out, size_t cap)
{
	struct outbuf b = { out, cap, 0, 0 };
	unsigned mask = 0;
	size_t i;

	while (arg != NULL && *arg != '\0') {
		const char *end = strchr(arg, ';');
		size_t n = end != NULL ? (size_t)(end - arg) : strlen(arg);

		for (i = 0; i < TW_ARRAY_LEN(mlst_facts); i++)
			if (fact_eq(arg, n, mlst_facts[i].name))
				mask |= mlst_facts[i].bit;
		arg += n;
		if (*arg == ';')
			arg++;
	}
	if (cap == 0)
		return mask;
	out[0] = '\0';
	for (i = 0; i < TW_ARRAY_LEN(mlst_facts); i++)
		if (mask & mlst_facts[i].bit)
			ob_printf(&b, "%s;", mlst_facts[i].name);
	if (b.overflow)
		out[0] = '\0';
	return mask;
}

int
list_format_mlst_feat(char *buf, size_t cap, unsigned facts)
{
	struct outbuf b = { buf, cap, 0, 0 };
	size_t i;

	if (cap == 0)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < TW_ARRAY_LEN(mlst_facts); i++)
		ob_printf(&b, "%s%s;", mlst_facts[i].name,
		    (facts & mlst_facts[i].bit) ? "*" : "");
	return ob_result(&b);
}

int
list_format_mdtm(char *buf, size_t cap, time_t t, int use_localtime)
{
	struct tm tm;
	long long year;

	if ((use_localtime ? localtime_r(&t, &tm) : gmtime_r(&t, &tm)) == NULL)
		return -1;
	year = (long long)tm.tm_year + 1900;
	if (year < 0 || year > 9999)
		return -1;
	return tw_snprintf(buf, cap, "%04lld%02d%02d%02d%02d%02d", year,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}
