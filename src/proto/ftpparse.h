/*
 * Parsers for FTP command arguments that carry addresses and paths.
 * Pure functions: no I/O, unit-tested and fuzzed.
 */
#ifndef TW_FTPPARSE_H
#define TW_FTPPARSE_H

#include <stddef.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>

#include "src/common/sockaddr.h"

/*
 * PORT h1,h2,h3,h4,p1,p2 (RFC 959). Each number 0..255 decimal, at most 3
 * digits, exactly six of them, no spaces inside. Fills an AF_INET address.
 * Returns 0 or -1.
 */
int ftp_parse_port(const char *arg, struct sockaddr_storage *out);

/*
 * EPRT <d><proto><d><addr><d><port><d> (RFC 2428). The delimiter is any
 * printable ASCII char 33..126 other than a digit; proto 1 = IPv4 (dotted
 * quad), 2 = IPv6 (inet_pton). Port 1..65535. Returns 0 or -1.
 */
int ftp_parse_eprt(const char *arg, struct sockaddr_storage *out);

/* EPSV argument (RFC 2428). */
enum ftp_epsv_kind {
	FTP_EPSV_ANY,	/* no argument */
	FTP_EPSV_ALL,	/* "ALL" (case-insensitive) */
	FTP_EPSV_PROTO,	/* "1" or "2": *proto set */
};
/* Returns 0 and sets *kind (and *proto for FTP_EPSV_PROTO), or -1. */
int ftp_parse_epsv(const char *arg, enum ftp_epsv_kind *kind, int *proto);

/*
 * Formats the 227 reply address part "h1,h2,h3,h4,p1,p2" for an IPv4
 * address and port (host order). Returns length or -1.
 */
int ftp_format_pasv(char *buf, size_t cap, const struct in_addr *addr, unsigned port);

/*
 * Doubles every '"' in path, as RFC 959 asks for the 257 reply.
 * Returns length or -1 when it does not fit.
 */
int ftp_quote_257(const char *path, char *out, size_t cap);

/*
 * Joins dir and name with exactly one '/' between them. Returns length or
 * -1 when it does not fit.
 */
int ftp_path_join(const char *dir, const char *name, char *out, size_t cap);

/*
 * tilde_user_enable (vsftpd's): arg "~user" or "~user/rest" names user's
 * home directory, as the passwd file (len bytes of text, lines of
 * name:password:uid:gid:gecos:home:shell) gives it: out becomes home, or
 * home "/" rest. Returns its length; -1 when arg names no user ("~" and
 * "~/" are the login directory's, not this), the file does not list it
 * with an absolute home, or it does not fit.
 */
int ftp_tilde_user(const char *arg, const char *passwd, size_t len, char *out, size_t cap);

/*
 * Checks a path argument from the client: non-empty, shorter than PATH_MAX,
 * no NUL (the line reader maps RFC 2640 "CR NUL" to CR already). Returns 0
 * or -1.
 */
int ftp_path_ok(const char *path);

/*
 * Whether a client may create a file or directory by this path (MKD,
 * STOR/APPE/STOU, RNTO): 0 unless it holds a CR or LF anywhere, -1 then.
 * A NUL cannot get here (the line reader refuses it), an LF only ends
 * the command line, but a CR arrives as RFC 2640's CR NUL or raw; POSIX
 * allows all but NUL and '/' in a name, and vsftpd creates such names,
 * but no listing or reply can show them unchanged (list_scrub_line), so
 * they are refused as a line break waiting to happen.
 */
int ftp_name_creatable(const char *path);

/* What LIST/NLST options ask for; the other letters change nothing. */
#define FTP_LIST_ALL		0x1u	/* 'a' or 'A': names that start with '.' */
#define FTP_LIST_RECURSIVE	0x2u	/* 'R': subdirectories too (ls_recurse_enable) */

/*
 * Splits LIST/NLST arguments: leading options such as "-a", "-l", "-lR"
 * are tolerated and reported in *flags (FTP_LIST_*); returns a pointer to
 * the remaining path (may be "").
 */
const char *ftp_list_args(const char *arg, unsigned *flags);

/*
 * mdtm_write's form of MDTM, as vsftpd tells it from a plain MDTM: an
 * argument that starts with a digit and whose first blank is at 8
 * (YYYYMMDD), at 14 (YYYYMMDDHHMMSS) or past 15 with a '.' at 14
 * (fractions, ignored). Only call it when the whole argument names no
 * file. Returns the path after the blank (nonempty) with *tm set (the
 * fields as written, tm_isdst -1: for timegm or mktime), or NULL when the
 * argument is not of that form or its time is not a real one.
 */
const char *ftp_mdtm_write_args(const char *arg, struct tm *tm);

#endif
