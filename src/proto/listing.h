/*
 * Directory listing formatters: `ls -l` lines for LIST, RFC 3659 facts
 * for MLSD/MLST, and the MDTM time stamp. Pure functions over struct stat.
 */
#ifndef TW_LISTING_H
#define TW_LISTING_H

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

/* The longest user or group name a listing shows; a longer one stays a number. */
#define LIST_ID_NAME_MAX 32

struct list_opts {
	int hide_ids;		/* owner and group shown as "ftp" */
	/* text_userdb_names: the name of a uid (is_group 0) or gid, or NULL
	 * for the number; NULL: numbers only. */
	const char *(*id_name)(unsigned id, int is_group);
	int use_localtime;	/* else UTC */
	time_t now;		/* for the "recent file" rule of ls -l */
};

/*
 * One LIST line without CRLF, e.g.
 * "-rw-r--r--    1 1000     1000         1234 Jan 02 15:04 name"
 * (files older than six months or in the future show the year instead of
 * the time, as ls does). Owner and group are numeric ids unless hide_ids
 * or id_name gives a name (at most LIST_ID_NAME_MAX bytes, no blank or
 * control byte, else the number).
 * link_target, when not NULL, is appended as " -> target".
 * Returns the length, or -1 when it does not fit in cap.
 */
int list_format_long(char *buf, size_t cap, const char *name,
		     const struct stat *st, const char *link_target,
		     const struct list_opts *o);

/* Which MLSx facts to emit (OPTS MLST selects them). */
enum mlst_fact {
	MLST_TYPE = 1 << 0,
	MLST_SIZE = 1 << 1,
	MLST_MODIFY = 1 << 2,
	MLST_PERM = 1 << 3,
	MLST_UNIQUE = 1 << 4,
	MLST_UNIX_MODE = 1 << 5,
	MLST_ALL = (1 << 6) - 1,
};

/* What the entry is relative to the listed directory (RFC 3659 7.5.1). */
enum mlst_kind { MLST_KIND_ENTRY, MLST_KIND_CDIR, MLST_KIND_PDIR };

/*
 * One MLSD line / MLST fact line without CRLF and without the leading
 * space MLST wants: "type=file;size=12;modify=20240102150405;perm=rw;
 * unique=801g1a2;UNIX.mode=0644; name". perm is computed from the mode and
 * can_write (the session's write permission): files r, w, a, d, f;
 * directories e, l, c, m, d, f, p. Times are always UTC per RFC 3659.
 * Returns the length or -1.
 */
int list_format_mlst(char *buf, size_t cap, const char *name,
		     const struct stat *st, enum mlst_kind kind,
		     unsigned facts, int can_write);

/*
 * Parses an OPTS MLST fact list ("type;size;modify;") into a mask; unknown
 * facts are ignored (RFC 3659 7.9). Writes the accepted list back in the
 * reply form ("type;size;modify;") into out. Returns the mask.
 */
unsigned list_parse_mlst_opts(const char *arg, char *out, size_t cap);

/* Writes the facts list for FEAT: "type*;size*;..." with '*' on enabled. */
int list_format_mlst_feat(char *buf, size_t cap, unsigned facts);

/*
 * What a CR or LF in a file name becomes in a listing: '?', the byte
 * vsftpd uses for what it will not print, and ls(1)'s default on a
 * terminal.
 */
#define LIST_NAME_SUBST '?'

/*
 * Replaces every CR and LF in buf[0..n) by LIST_NAME_SUBST, in place. A
 * listing (and STAT's reply) is one entry per CRLF-ended line: a name
 * holding "\r\n213 x" must not end a line, fake a reply or add an entry.
 * The name is lost for such files (the client cannot name them back),
 * which is the point: nothing else in the line changes.
 */
void list_scrub_line(char *buf, size_t n);

/* YYYYMMDDHHMMSS for MDTM and modify=, UTC unless use_localtime. */
int list_format_mdtm(char *buf, size_t cap, time_t t, int use_localtime);

#endif
