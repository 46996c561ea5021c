/*
 * Fuzz target for the pure FTP helpers: every argument parser and listing
 * formatter on the input as a C string, and the ASCII converters on the
 * raw bytes. Beyond "never crashes", each checks invariants the callers
 * rely on, and abort()s when one breaks:
 *   - a parsed PORT/EPRT address is AF_INET/AF_INET6 with a port 1..65535,
 *     and PORT survives a format/parse round trip;
 *   - formatters return the length they wrote, or -1 when cap is short;
 *   - ascii_to_net writes at most 2n bytes, ascii_from_net at most n+1,
 *     chunking never changes the result, and text without CR survives a
 *     download/upload round trip.
 * Output buffers are exactly as large as the API promises it needs, so
 * ASan catches any write past them.
 */
#include "src/proto/ascii.h"
#include "src/proto/ftpparse.h"
#include "src/proto/listing.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The ASCII split test covers every cut point of this many bytes. */
#define SPLIT_PREFIX 48

static void
check(int ok)
{
	if (!ok)
		abort();
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n > 0 ? n : 1);

	check(p != NULL);
	return p;
}

static void
check_addr(const struct sockaddr_storage *ss)
{
	unsigned port = sa_port(ss);

	check(ss->ss_family == AF_INET || ss->ss_family == AF_INET6);
	check(port >= 1 && port <= 65535);
	check(sa_same_host(ss, ss));
}

static void
fuzz_port(const char *s)
{
	struct sockaddr_storage ss, again;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	char buf[32];

	if (ftp_parse_port(s, &ss) != 0)
		return;
	check(ss.ss_family == AF_INET);
	check_addr(&ss);
	check(ftp_format_pasv(buf, sizeof(buf), &sin->sin_addr,
	    sa_port(&ss)) > 0);
	check(ftp_parse_port(buf, &again) == 0);
	check(memcmp(&ss, &again, sizeof(struct sockaddr_in)) == 0);
}

static void
fuzz_eprt(const char *s)
{
	struct sockaddr_storage ss;

	if (ftp_parse_eprt(s, &ss) == 0)
		check_addr(&ss);
}

static void
fuzz_epsv(const char *s)
{
	enum ftp_epsv_kind kind;
	int proto = 0;

	if (ftp_parse_epsv(s, &kind, &proto) != 0)
		return;
	check(kind == FTP_EPSV_ANY || kind == FTP_EPSV_ALL ||
	    kind == FTP_EPSV_PROTO);
	if (kind == FTP_EPSV_PROTO)
		check(proto == 1 || proto == 2);
}

static void
fuzz_paths(const char *s, size_t n)
{
	size_t quotes = 0, i, cap, dlen, lead;
	char *out = xmalloc(2 * n + 2);
	int len;

	for (i = 0; i < n; i++)
		quotes += s[i] == '"';
	len = ftp_quote_257(s, out, n + quotes + 1);
	check(len == (int)(n + quotes) && strlen(out) == (size_t)len);
	check(ftp_quote_257(s, out, n + quotes) == -1);

	/* Exactly one '/' where the parts meet; slashes inside are kept. */
	dlen = n;
	while (dlen > 0 && s[dlen - 1] == '/')
		dlen--;
	lead = strspn(s, "/");
	cap = 2 * n + 2;
	len = ftp_path_join(s, s, out, cap);
	check(len > 0 && strlen(out) == (size_t)len);
	check((size_t)len == dlen + 1 + (n - lead));
	check(memcmp(out, s, dlen) == 0 && out[dlen] == '/' &&
	    memcmp(out + dlen + 1, s + lead, n - lead) == 0);
	check(ftp_path_join(s, s, out, (size_t)len) == -1);

	check(ftp_path_ok(s) == (n > 0 && n < PATH_MAX ? 0 : -1));
	free(out);
}

static void
fuzz_list_args(const char *s, size_t n)
{
	unsigned flags = 99;
	const char *rest = ftp_list_args(s, &flags);

	check((flags & ~(FTP_LIST_ALL | FTP_LIST_RECURSIVE)) == 0);
	check(rest >= s && rest <= s + n);
	check(*rest != '-' && *rest != ' ' && *rest != '\t');
}

/* mdtm_write: a path past the blank, and a time that names a real second. */
static void
fuzz_mdtm_write(const char *s, size_t n)
{
	struct tm tm;
	const char *path = ftp_mdtm_write_args(s, &tm);

	if (path == NULL)
		return;
	check(path > s + 8 && path <= s + n && path[-1] == ' ' && *path != '\0');
	check(tm.tm_year >= 70 && tm.tm_mon >= 0 && tm.tm_mon <= 11);
	check(tm.tm_mday >= 1 && tm.tm_mday <= 31 && tm.tm_hour <= 23 && tm.tm_min <= 59 &&
	    tm.tm_sec <= 60 && tm.tm_isdst == -1);
}

/*
 * tilde_user_enable's lookup: the input up to its first NUL is the
 * argument, the raw bytes the passwd file (NULs and all). A result is
 * an absolute path of the length returned, within cap.
 */
static void
fuzz_tilde_user(const char *s, const uint8_t *data, size_t size)
{
	size_t cap = 64;
	char *out = xmalloc(cap);
	int len = ftp_tilde_user(s, (const char *)data, size, out, cap);

	check(len == -1 || (len > 0 && (size_t)len < cap && out[0] == '/' &&
			    strlen(out) == (size_t)len));
	free(out);
}

static void
fuzz_mlst_opts(const char *s)
{
	char out[64], again[64];
	unsigned mask = list_parse_mlst_opts(s, out, sizeof(out));

	check((mask & ~(unsigned)MLST_ALL) == 0);
	check(list_parse_mlst_opts(out, again, sizeof(again)) == mask);
	check(strcmp(out, again) == 0);
	check(list_format_mlst_feat(out, sizeof(out), mask) > 0);
}

/* Takes up to 8 bytes from the input as a number; missing bytes are 0. */
static uint64_t
take64(const uint8_t *data, size_t size, size_t *pos)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8 && *pos < size; i++, (*pos)++)
		v = v << 8 | data[*pos];
	return v;
}

/* text_userdb_names' lookup, answering with input bytes. */
static const char *fuzz_name;

static const char *
fuzz_id_name(unsigned id, int is_group)
{
	(void)id;
	(void)is_group;
	return fuzz_name;
}

/* A struct stat made of input bytes: any mode, time or size at all. */
static void
fuzz_formatters(const char *name, const uint8_t *data, size_t size)
{
	struct stat st;
	struct list_opts o;
	size_t pos = 0, cap = strlen(name) * 2 + 512;
	char *buf = xmalloc(cap);
	uint64_t flags;
	int len;

	memset(&st, 0, sizeof(st));
	st.st_mode = (mode_t)take64(data, size, &pos);
	st.st_nlink = (nlink_t)take64(data, size, &pos);
	st.st_uid = (uid_t)take64(data, size, &pos);
	st.st_gid = (gid_t)take64(data, size, &pos);
	st.st_size = (off_t)take64(data, size, &pos);
	st.st_mtime = (time_t)take64(data, size, &pos);
	st.st_rdev = (dev_t)take64(data, size, &pos);
	st.st_dev = (dev_t)take64(data, size, &pos);
	st.st_ino = (ino_t)take64(data, size, &pos);
	flags = take64(data, size, &pos);
	o.hide_ids = (int)(flags & 1);
	fuzz_name = name;
	o.id_name = (flags & 4) ? fuzz_id_name : NULL;
	o.use_localtime = 0;	/* localtime reads files: keep the target pure */
	o.now = (time_t)take64(data, size, &pos);

	len = list_format_long(buf, cap, name, &st, (flags & 2) ? name : NULL, &o);
	check(len > 0 && (size_t)len == strlen(buf));
	check(list_format_long(buf, (size_t)len, name, &st,
	    (flags & 2) ? name : NULL, &o) == -1);

	len = list_format_mlst(buf, cap, name, &st, (enum mlst_kind)((flags >> 2) % 3),
	    (unsigned)(flags >> 4) & MLST_ALL, (int)((flags >> 10) & 1));
	check(len > 0 && (size_t)len == strlen(buf));
	check(list_format_mlst(buf, (size_t)len, name, &st,
	    (enum mlst_kind)((flags >> 2) % 3), (unsigned)(flags >> 4) & MLST_ALL,
	    (int)((flags >> 10) & 1)) == -1);

	len = list_format_mdtm(buf, 15, st.st_mtime, 0);
	check(len == -1 || (len == 14 && strspn(buf, "0123456789") == 14));
	free(buf);
}

static size_t
to_net_split(const char *in, size_t n, size_t cut, char *out)
{
	int prev_cr = 0;
	size_t len;

	len = ascii_to_net(in, cut, out, &prev_cr);
	return len + ascii_to_net(in + cut, n - cut, out + len, &prev_cr);
}

static size_t
from_net_split(const char *in, size_t n, size_t cut, char *out)
{
	int pending = 0;
	size_t len;

	len = ascii_from_net(in, cut, out, &pending);
	len += ascii_from_net(in + cut, n - cut, out + len, &pending);
	return len + ascii_from_net_end(out + len, &pending);
}

static void
fuzz_ascii(const char *in, size_t n)
{
	char *net = xmalloc(2 * n), *back = xmalloc(2 * n + 1);
	char *one = xmalloc(2 * SPLIT_PREFIX + 1), *part = xmalloc(2 * SPLIT_PREFIX + 1);
	size_t net_len, back_len, one_len, cut, p = n < SPLIT_PREFIX ? n : SPLIT_PREFIX;
	int prev_cr = 0, pending = 0;

	net_len = ascii_to_net(in, n, net, &prev_cr);
	check(net_len >= n && net_len <= 2 * n);
	check(prev_cr == (n > 0 && in[n - 1] == '\r'));

	back_len = ascii_from_net(in, n, back, &pending);
	check(back_len <= n);
	back_len += ascii_from_net_end(back + back_len, &pending);
	check(back_len <= n && pending == 0);

	if (memchr(in, '\r', n) == NULL) {
		pending = 0;
		back_len = ascii_from_net(net, net_len, back, &pending);
		back_len += ascii_from_net_end(back + back_len, &pending);
		check(back_len == n && memcmp(back, in, n) == 0);
	}

	one_len = to_net_split(in, p, 0, one);
	for (cut = 1; cut <= p; cut++)
		check(to_net_split(in, p, cut, part) == one_len &&
		    memcmp(part, one, one_len) == 0);
	one_len = from_net_split(in, p, 0, one);
	for (cut = 1; cut <= p; cut++)
		check(from_net_split(in, p, cut, part) == one_len &&
		    memcmp(part, one, one_len) == 0);
	free(net);
	free(back);
	free(one);
	free(part);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);
	size_t n;

	memcpy(s, data, size);
	s[size] = '\0';
	n = strlen(s);

	fuzz_port(s);
	fuzz_eprt(s);
	fuzz_epsv(s);
	fuzz_paths(s, n);
	fuzz_list_args(s, n);
	fuzz_mdtm_write(s, n);
	fuzz_mlst_opts(s);
	fuzz_tilde_user(s, data, size);
	fuzz_formatters(s, data, size);
	fuzz_ascii((const char *)data, size);
	free(s);
	return 0;
}
