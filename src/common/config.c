/*
 * Configuration: parsing, checking and printing, all driven by the one
 * table in config_table.h. No option name is spelled out here except in
 * the alias table and in the list of vsftpd's options, which exist to turn
 * a foreign config into a precise error instead of a vague one.
 *
 * Pure code: no process state, so the unit tests and the fuzz target link
 * against it alone. Every error names where it came from (file and line,
 * or "-o") and which option, because the operator reads it at start-up.
 */
#include "src/common/config.h"
#include "src/common/util.h"
#include "src/common/sockaddr.h"

#include <sys/stat.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Catch a table default that its own bounds reject while compiling. */
#define CFG_BOOL(n, def, doc) \
	_Static_assert((def) == 0 || (def) == 1, #n ": bool default must be 0 or 1");
#define CFG_UINT(n, def, mn, mx, doc) \
	_Static_assert((mn) <= (def) && (def) <= (mx) && (mx) <= 0xffffffffULL, \
		       #n ": default outside [min, max]");
#define CFG_OCTAL(n, def, mx, doc) \
	_Static_assert((def) <= (mx) && (mx) <= 07777, #n ": default above max");
#define CFG_STR(n, def, doc) \
	_Static_assert(sizeof(def) <= CONFIG_MAX_STR, #n ": default too long");
#include "src/common/config_table.h"
#undef CFG_BOOL
#undef CFG_UINT
#undef CFG_OCTAL
#undef CFG_STR

const struct cfg_desc cfg_table[] = {
#define CFG_BOOL(n, def, doc) \
	{ #n, CFG_T_BOOL, offsetof(struct tw_config, n), (def), NULL, 0, 1, doc },
#define CFG_UINT(n, def, mn, mx, doc) \
	{ #n, CFG_T_UINT, offsetof(struct tw_config, n), (def), NULL, (mn), (mx), doc },
#define CFG_OCTAL(n, def, mx, doc) \
	{ #n, CFG_T_OCTAL, offsetof(struct tw_config, n), (def), NULL, 0, (mx), doc },
#define CFG_STR(n, def, doc) \
	{ #n, CFG_T_STR, offsetof(struct tw_config, n), 0, (def), 0, \
	  CONFIG_MAX_STR - 1, doc },
#include "src/common/config_table.h"
#undef CFG_BOOL
#undef CFG_UINT
#undef CFG_OCTAL
#undef CFG_STR
};

const size_t cfg_table_len = TW_ARRAY_LEN(cfg_table);

/* Other names accepted for an option, so that vsftpd configs carry over. */
static const struct {
	const char *alias;
	const char *name;
} cfg_aliases[] = {
	{ "vsftpd_log_file", "log_file" },
	/* vsftpd 3.0.5's spellings of its TLS version switches */
	{ "ssl_tlsv11", "ssl_tlsv1_1" },
	{ "ssl_tlsv12", "ssl_tlsv1_2" },
	{ "ssl_tlsv13", "ssl_tlsv1_3" },
};

/*
 * Every option vsftpd 3.0.3 knows: the 127 documented in vsftpd.conf(5)
 * plus the few its parser accepts without documenting them (the last
 * group). Options twinftpd implements are matched against cfg_table[]
 * first, so being listed here as well does no harm. A name in this list
 * that twinftpd lacks gets "not supported" rather than "unknown": the
 * operator then knows the line is not a typo but a feature to drop.
 */
static const char *const vsftpd_options[] = {
	"accept_timeout", "allow_anon_ssl", "anon_max_rate",
	"anon_mkdir_write_enable", "anon_other_write_enable", "anon_root",
	"anon_umask", "anon_upload_enable", "anon_world_readable_only",
	"anonymous_enable", "ascii_download_enable", "ascii_upload_enable",
	"async_abor_enable", "background", "banned_email_file", "banner_file",
	"ca_certs_file", "check_shell", "chmod_enable", "chown_upload_mode",
	"chown_uploads", "chown_username", "chroot_list_enable",
	"chroot_list_file", "chroot_local_user", "cmds_allowed", "cmds_denied",
	"connect_from_port_20", "connect_timeout", "data_connection_timeout",
	"debug_ssl", "delay_failed_login", "delay_successful_login",
	"delete_failed_uploads", "deny_email_enable", "deny_file",
	"dirlist_enable", "dirmessage_enable", "download_enable",
	"download_file", "dsa_cert_file", "dsa_private_key_file",
	"dual_log_enable", "email_password_file", "file_open_mode",
	"force_anon_data_ssl", "force_anon_logins_ssl", "force_dot_files",
	"force_local_data_ssl", "force_local_logins_ssl", "ftp_data_port",
	"ftp_username", "ftpd_banner", "guest_enable", "guest_username",
	"hide_file", "hide_ids", "idle_session_timeout", "implicit_ssl",
	"listen", "listen_address", "listen_address6", "listen_ipv6",
	"listen_port", "local_enable", "local_max_rate", "local_root",
	"local_umask", "lock_upload_files", "log_ftp_protocol",
	"ls_recurse_enable", "max_clients", "max_login_fails", "max_per_ip",
	"mdtm_write", "message_file", "no_anon_password", "no_log_lock",
	"nopriv_user", "one_process_model", "pam_service_name",
	"passwd_chroot_enable", "pasv_addr_resolve", "pasv_address",
	"pasv_enable", "pasv_max_port", "pasv_min_port", "pasv_promiscuous",
	"port_enable", "port_promiscuous", "require_cert", "require_ssl_reuse",
	"rsa_cert_file", "rsa_private_key_file", "run_as_launching_user",
	"secure_chroot_dir", "secure_email_list_enable", "session_support",
	"setproctitle_enable", "ssl_ciphers", "ssl_enable", "ssl_request_cert",
	"ssl_sslv2", "ssl_sslv3", "ssl_tlsv1", "strict_ssl_read_eof",
	"strict_ssl_write_shutdown", "syslog_enable", "tcp_wrappers",
	"text_userdb_names", "tilde_user_enable", "trans_chunk_size",
	"upload_file", "use_localtime", "use_sendfile", "user_config_dir",
	"user_sub_token", "userlist_deny", "userlist_enable", "userlist_file",
	"validate_cert", "virtual_use_local_privs", "vsftpd_log_file",
	"write_enable", "xferlog_enable", "xferlog_file", "xferlog_std_format",
	/* accepted by vsftpd 3.0.3's parser, absent from its man page */
	"allow_writeable_chroot", "ftp_enable", "http_enable", "isolate",
	"isolate_network", "ptrace_sandbox", "seccomp_sandbox",
	"utf8_filesystem",
	/* Red Hat's package adds these (RHEL 7 to 9, Fedora) */
	"better_stou", "bind_retries", "dh_param_file", "ecdh_param_file",
	"log_die", "reverse_lookup_enable", "userlist_log",
	/* vsftpd 3.0.5's other spellings (aliases above) */
	"ssl_tlsv11", "ssl_tlsv12", "ssl_tlsv13",
};

/*
 * vsftpd options twinftpd does not implement, with the value at which
 * each changes nothing here: what twinftpd does anyway, which is
 * vsftpd's default. A vsftpd.conf that spells out such a value starts,
 * with a note. Any other value would change behaviour and stays an
 * error. kind: 'b' YES/NO, 'n' a decimal and 'o' an octal number, 's' a
 * string ("" for unset), '*' any value, for the options whose every
 * value means nothing here; why says so.
 */
static const struct {
	const char *name;
	char kind;
	const char *value;
	const char *why;
} vsftpd_inert[] = {
	{ "async_abor_enable", '*', NULL,
	  "ABOR is always understood, with or without the Telnet urgent signal" },
	{ "utf8_filesystem", '*', NULL,
	  "file names are passed as the bytes they are, and FEAT always names UTF8" },
	/* YES gave up vsftpd's privilege separation for speed (anonymous
	 * only); ignoring it keeps the separation, so it restricts more. */
	{ "one_process_model", '*', NULL,
	  "sessions are always privilege-separated; the pre-forked pool gives the speed "
	  "one_process_model bought" },
	{ "setproctitle_enable", '*', NULL,
	  "process titles are not changed" },
	{ "no_log_lock", '*', NULL,
	  "each log line is written whole in one append, without a lock" },
	/* Red Hat's patched vsftpd */
	{ "log_die", '*', NULL,
	  "an error that ends a session or the daemon is always logged, with its reason" },
	{ "better_stou", '*', NULL,
	  "STOU never overwrites: it creates \"name\", else name.1 to name.999, each with O_EXCL" },
	{ "bind_retries", '*', NULL,
	  "PASV tries every port of pasv_min_port..pasv_max_port, from a random one, before it fails" },
	{ "check_shell", '*', NULL,
	  "local logins go through PAM, which vsftpd too lets decide about shells" },
	{ "ptrace_sandbox", 'b', "NO", NULL },
	/* YES ran vsftpd as whoever started it, with no separation and no
	 * chroot: started by root (twinftpd must be), every login had root's
	 * files. Ignored, each session runs as its own user: it restricts
	 * more. */
	{ "run_as_launching_user", '*', NULL,
	  "sessions always run privilege-separated, each as its own user (started by root, "
	  "as twinftpd must be, vsftpd's YES gave every login root's files)" },
	{ "ftp_enable", 'b', "YES", NULL },
	{ "http_enable", 'b', "NO", NULL },
	{ "user_sub_token", 's', "", NULL },
	{ "dsa_cert_file", 's', "", NULL },
	{ "dsa_private_key_file", 's', "", NULL },
	{ "download_file", 's', "", NULL },
	{ "upload_file", 's', "", NULL },
};

/* How much of a hostile name or value an error message repeats. */
#define MSG_QUOTE_MAX 64

/*
 * Writes "ORIGIN:LINE: message" (or "ORIGIN: message" for line 0) into
 * err, cut to errlen; a NULL origin writes the message alone, for the
 * cross-option checks, which belong to no line (the caller names the
 * file). Returns -1, so that a failing check can return its call. A cut
 * message is still a message: snprintf's count is not needed.
 */
static int __attribute__((format(printf, 5, 6)))
cfg_error(char *err, size_t errlen, const char *origin, unsigned line,
	  const char *fmt, ...)
{
	va_list ap;
	size_t n = 0;
	int r = 0;

	if (err == NULL || errlen == 0)
		return -1;
	if (origin != NULL && line > 0)
		r = snprintf(err, errlen, "%s:%u: ", origin, line);
	else if (origin != NULL)
		r = snprintf(err, errlen, "%s: ", origin);
	if (r > 0)
		n = (size_t)r < errlen ? (size_t)r : errlen - 1;
	va_start(ap, fmt);
	(void)vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Copies at most MSG_QUOTE_MAX bytes of s for an error message, with
 * control and non-ASCII bytes replaced: the message goes to a terminal
 * or a log, and the config line may be anything.
 */
static void
quote_for_msg(char *dst, size_t dstsz, const char *s)
{
	size_t i, n = 0;

	for (i = 0; s[i] != '\0' && n + 4 < dstsz; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (i == MSG_QUOTE_MAX) {
			memcpy(dst + n, "...", 3);
			n += 3;
			break;
		}
		dst[n++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	dst[n] = '\0';
}

static int
is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' ||
	    ch == '\v' || ch == '\f';
}

static const struct cfg_desc *
cfg_find(const char *name)
{
	size_t i;

	for (i = 0; i < cfg_table_len; i++)
		if (strcmp(cfg_table[i].name, name) == 0)
			return &cfg_table[i];
	return NULL;
}

/* Resolves a name or an alias to its table entry, or NULL. */
static const struct cfg_desc *
cfg_lookup(const char *name)
{
	const struct cfg_desc *d;
	size_t i;

	if ((d = cfg_find(name)) != NULL)
		return d;
	for (i = 0; i < TW_ARRAY_LEN(cfg_aliases); i++) {
		if (strcmp(cfg_aliases[i].alias, name) != 0)
			continue;
		if ((d = cfg_find(cfg_aliases[i].name)) == NULL)
			bug("%s: alias %s names no option", __func__, name);
		return d;
	}
	return NULL;
}

static int
is_vsftpd_option(const char *name)
{
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(vsftpd_options); i++)
		if (strcmp(vsftpd_options[i], name) == 0)
			return 1;
	return 0;
}

static int
parse_bool(const char *s, int *out)
{
	if (tw_strcaseeq(s, "YES") || tw_strcaseeq(s, "TRUE") ||
	    strcmp(s, "1") == 0) {
		*out = 1;
		return 0;
	}
	if (tw_strcaseeq(s, "NO") || tw_strcaseeq(s, "FALSE") ||
	    strcmp(s, "0") == 0) {
		*out = 0;
		return 0;
	}
	return -1;
}

#define DECIMAL_DIGITS "0123456789"
#define OCTAL_DIGITS "01234567"
/* vsftpd's lowest passive port when only pasv_max_port is set. */
#define PASV_LOWEST 1024
/*
 * Fits "between 4294967295 and 4294967295", the longest range an error
 * names, so formatting it cannot truncate.
 */
#define NUMBER_RANGE_MAX 64

static int
all_digits(const char *s, const char *digits)
{
	if (*s == '\0')
		return 0;
	return s[strspn(s, digits)] == '\0';
}

/*
 * s holds digits of base only ("077", "0022" and "77" are one octal
 * value); -1 past max, which no table entry puts above 32 bits, so the
 * sum cannot overflow.
 */
static int
parse_digits(const char *s, unsigned base, unsigned long long max,
	     unsigned long long *out)
{
	unsigned long long v = 0;

	for (; *s != '\0'; s++) {
		v = v * base + (unsigned)(*s - '0');
		if (v > max)
			return -1;
	}
	*out = v;
	return 0;
}

static int
has_control_char(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return 1;
	return 0;
}

/* Stores value, already trimmed, into the option d describes. */
static int
cfg_set(struct tw_config *c, const struct cfg_desc *d, const char *value,
	const char *origin, unsigned line, char *err, size_t errlen)
{
	char *field = (char *)c + d->offset;
	char qv[MSG_QUOTE_MAX + 8], range[NUMBER_RANGE_MAX];
	unsigned long long num;
	size_t len;
	int b, octal;

	quote_for_msg(qv, sizeof(qv), value);
	switch (d->type) {
	case CFG_T_BOOL:
		if (parse_bool(value, &b) == -1)
			return cfg_error(err, errlen, origin, line,
			    "option '%s': expected YES or NO, not '%s'",
			    d->name, qv);
		*(int *)(void *)field = b;
		return 0;
	case CFG_T_UINT:
	case CFG_T_OCTAL:
		octal = d->type == CFG_T_OCTAL;
		if (!all_digits(value, octal ? OCTAL_DIGITS : DECIMAL_DIGITS))
			return cfg_error(err, errlen, origin, line,
			    "option '%s': expected %s, not '%s'", d->name,
			    octal ? "an octal number such as 022" :
			    "a decimal number", qv);
		if (parse_digits(value, octal ? 8 : 10, d->max, &num) == -1 ||
		    num < d->min) {
			if (octal)
				(void)tw_snprintf(range, sizeof(range),
				    "at most 0%03llo", d->max);
			else
				(void)tw_snprintf(range, sizeof(range),
				    "between %llu and %llu", d->min, d->max);
			return cfg_error(err, errlen, origin, line,
			    "option '%s': must be %s, not '%s'", d->name, range,
			    qv);
		}
		*(unsigned int *)(void *)field = (unsigned int)num;
		return 0;
	case CFG_T_STR:
		len = strlen(value);
		if (len >= CONFIG_MAX_STR)
			return cfg_error(err, errlen, origin, line,
			    "option '%s': value is %zu bytes long, at most %d allowed",
			    d->name, len, CONFIG_MAX_STR - 1);
		/*
		 * Strings end up in replies (ftpd_banner), log lines and
		 * paths; a stray CR or escape byte in any of them is a way
		 * to forge a second reply or log line.
		 */
		if (has_control_char(value))
			return cfg_error(err, errlen, origin, line,
			    "option '%s': value contains a control character",
			    d->name);
		memcpy(field, value, len + 1);
		return 0;
	}
	bug("%s: option %s has type %d", __func__, d->name, (int)d->type);
}

int
config_record_check(const struct tw_config *c)
{
	size_t i;

	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];
		const char *field = (const char *)c + d->offset;
		unsigned v;

		switch (d->type) {
		case CFG_T_BOOL:
			if (*(const int *)(const void *)field != 0 &&
			    *(const int *)(const void *)field != 1)
				return -1;
			break;
		case CFG_T_UINT:
		case CFG_T_OCTAL:
			v = *(const unsigned int *)(const void *)field;
			if (v < d->min || v > d->max)
				return -1;
			break;
		case CFG_T_STR:
			if (memchr(field, '\0', CONFIG_MAX_STR) == NULL)
				return -1;
			break;
		}
	}
	return 0;
}

void
config_init_defaults(struct tw_config *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];
		char *field = (char *)c + d->offset;

		switch (d->type) {
		case CFG_T_BOOL:
			*(int *)(void *)field = (int)d->def_num;
			break;
		case CFG_T_UINT:
		case CFG_T_OCTAL:
			*(unsigned int *)(void *)field = (unsigned int)d->def_num;
			break;
		case CFG_T_STR:
			if (tw_strlcpy(field, d->def_str, CONFIG_MAX_STR) == -1)
				bug("%s: default of %s too long", __func__, d->name);
			break;
		}
	}
}

/* Whether value means vsftpd_inert[i].value; -1 when not. */
static int
inert_value_matches(size_t i, const char *value)
{
	unsigned long long a, b;
	int x, y;

	switch (vsftpd_inert[i].kind) {
	case '*':
		return 1;
	case 'b':
		return parse_bool(value, &x) == 0 && parse_bool(vsftpd_inert[i].value, &y) == 0 &&
		    x == y;
	case 'n':
	case 'o':
		if (!all_digits(value, vsftpd_inert[i].kind == 'o' ? OCTAL_DIGITS : DECIMAL_DIGITS))
			return 0;
		return parse_digits(value, vsftpd_inert[i].kind == 'o' ? 8 : 10,
		    0xffffffffULL, &a) == 0 &&
		    parse_digits(vsftpd_inert[i].value, vsftpd_inert[i].kind == 'o' ? 8 : 10,
		    0xffffffffULL, &b) == 0 && a == b;
	default:
		return strcmp(value, vsftpd_inert[i].value) == 0;
	}
}

/*
 * A vsftpd option twinftpd lacks: 1 with a note when value changes
 * nothing here, else -1 with the error, which says which value would
 * be accepted.
 */
static int
vsftpd_option_value(const char *name, const char *value, const char *origin,
		    unsigned line, char *err, size_t errlen, char *note, size_t notelen)
{
	char qn[MSG_QUOTE_MAX + 8], qv[MSG_QUOTE_MAX + 8];
	size_t i;

	quote_for_msg(qn, sizeof(qn), name);
	quote_for_msg(qv, sizeof(qv), value);
	for (i = 0; i < TW_ARRAY_LEN(vsftpd_inert); i++) {
		if (strcmp(vsftpd_inert[i].name, name) != 0)
			continue;
		if (inert_value_matches(i, value)) {
			if (vsftpd_inert[i].why != NULL)
				(void)cfg_error(note, notelen, origin, line,
				    "vsftpd option '%s' accepted and ignored: %s",
				    qn, vsftpd_inert[i].why);
			else
				(void)cfg_error(note, notelen, origin, line,
				    "vsftpd option '%s=%s' accepted: that is what twinftpd does anyway",
				    qn, qv);
			return 1;
		}
		return cfg_error(err, errlen, origin, line,
		    "option '%s' is a vsftpd option that twinftpd does not support: "
		    "'%s=%s' would change what the server does (only %s=%s%s, "
		    "which changes nothing, is accepted)", qn, qn, qv, qn,
		    vsftpd_inert[i].value,
		    vsftpd_inert[i].value[0] != '\0' ? "" : " with no value");
	}
	if (is_vsftpd_option(name))
		return cfg_error(err, errlen, origin, line,
		    "option '%s' is a vsftpd option that twinftpd does not support", qn);
	return cfg_error(err, errlen, origin, line, "unknown option '%s'", qn);
}

/*
 * "max_clients=5 # comment", "listen_address=10.0.0.1  # eth1": vsftpd
 * reads numbers with atoi() and IPv4 addresses with inet_aton(), which
 * stop at the blank, so such lines work there. For those options only,
 * cuts value at a blank run followed by '#'; 1 when it did. (vsftpd
 * refuses a comment after YES or NO, and keeps it in a string.)
 */
static int
cut_inline_comment(const struct cfg_desc *d, char *value)
{
	char *p;

	if (d->type != CFG_T_UINT && d->type != CFG_T_OCTAL &&
	    strcmp(d->name, "listen_address") != 0 && strcmp(d->name, "pasv_address") != 0)
		return 0;
	for (p = value; *p != '\0'; p++) {
		char *q = p;

		if (!is_space(*p))
			continue;
		while (is_space(*q))
			q++;
		if (*q == '#' && p > value) {
			*p = '\0';
			return 1;
		}
		p = q - 1;
	}
	return 0;
}

/*
 * One name=value line: 0 when applied, 1 when accepted with a note in
 * note, -1 with the error in err.
 */
static int
apply_line(struct tw_config *c, const char *text, const char *origin, unsigned line,
	   char *err, size_t errlen, char *note, size_t notelen)
{
	char name[CONFIG_MAX_LINE + 1], qn[MSG_QUOTE_MAX + 8];
	const struct cfg_desc *d;
	const char *eq, *value;
	size_t namelen, vlen;
	char *vcopy;
	int r;

	eq = strchr(text, '=');
	namelen = eq != NULL ? (size_t)(eq - text) : strlen(text);
	if (namelen > CONFIG_MAX_LINE)
		return cfg_error(err, errlen, origin, line,
		    "line longer than %d bytes", CONFIG_MAX_LINE);
	memcpy(name, text, namelen);
	name[namelen] = '\0';
	quote_for_msg(qn, sizeof(qn), name);

	if (eq == NULL || namelen == 0)
		return cfg_error(err, errlen, origin, line,
		    "expected name=value, not '%s'", qn);
	/* vsftpd reads "listen =YES" as an option called "listen ". */
	if (is_space(name[0]) || is_space(name[namelen - 1]))
		return cfg_error(err, errlen, origin, line,
		    "option '%s': no spaces allowed before the name or before '='",
		    qn);

	/* Trailing blanks and the CR of a CRLF file are not part of a value. */
	value = eq + 1;
	vlen = strlen(value);
	while (vlen > 0 && is_space(value[vlen - 1]))
		vlen--;
	if ((vcopy = malloc(vlen + 1)) == NULL)
		die("%s: out of memory", __func__);
	memcpy(vcopy, value, vlen);
	vcopy[vlen] = '\0';
	if ((d = cfg_lookup(name)) == NULL) {
		r = vsftpd_option_value(name, vcopy, origin, line, err, errlen, note, notelen);
	} else if (cut_inline_comment(d, vcopy)) {
		r = cfg_set(c, d, vcopy, origin, line, err, errlen);
		if (r == 0) {
			(void)cfg_error(note, notelen, origin, line, "option '%s': the comment "
			    "after '%s' is ignored, as vsftpd ignores it", d->name, vcopy);
			r = 1;
		}
	} else {
		r = cfg_set(c, d, vcopy, origin, line, err, errlen);
	}
	if (r >= 0 && d != NULL && strcmp(d->name, "anonymous_enable") == 0)
		c->anonymous_enable_written = 1;
	if (r >= 0 && d != NULL && strcmp(d->name, "local_enable") == 0)
		c->local_enable_written = 1;
	free(vcopy);
	return r;
}

int
config_apply_line(struct tw_config *c, const char *text, const char *origin,
		  unsigned line, char *err, size_t errlen)
{
	char note[CONFIG_MAX_MSG];

	return apply_line(c, text, origin, line, err, errlen, note, sizeof(note)) == -1 ? -1 : 0;
}

unsigned
config_apply_line_all(struct tw_config *c, const char *text, const char *origin,
		      unsigned line, cfg_report_fn report, void *ctx)
{
	char err[CONFIG_MAX_MSG], note[CONFIG_MAX_MSG];

	switch (apply_line(c, text, origin, line, err, sizeof(err), note, sizeof(note))) {
	case -1:
		report(ctx, CFG_ERROR, err);
		return 1;
	case 1:
		report(ctx, CFG_NOTE, note);
		return 0;
	default:
		return 0;
	}
}

static int
is_comment_or_blank(const char *s)
{
	if (s[0] == '#')
		return 1;
	for (; *s != '\0'; s++)
		if (!is_space(*s))
			return 0;
	return 1;
}

/* After a bad line, the next one is read from its start. */
static void
skip_rest_of_line(FILE *f)
{
	int ch;

	do
		ch = getc(f);
	while (ch != EOF && ch != '\n');
}

/*
 * Reads one line into buf (without its '\n'). Returns 1 for a line,
 * 0 at end of file, -1 on an error described in err; after -1 with
 * ferror(f) clear, the next call reads the next line.
 */
static int
read_config_line(FILE *f, char *buf, size_t bufsz, const char *path,
		 unsigned lineno, char *err, size_t errlen)
{
	size_t n = 0;
	int ch;

	for (;;) {
		ch = getc(f);
		if (ch == EOF) {
			if (ferror(f))
				return cfg_error(err, errlen, path, lineno,
				    "read error: %s", strerror(errno));
			buf[n] = '\0';
			return n > 0 ? 1 : 0;
		}
		if (ch == '\n')
			break;
		if (ch == '\0') {
			skip_rest_of_line(f);
			return cfg_error(err, errlen, path, lineno,
			    "NUL byte in line");
		}
		/* Refuse rather than split: half a line is another setting. */
		if (n + 1 >= bufsz) {
			skip_rest_of_line(f);
			return cfg_error(err, errlen, path, lineno,
			    "line longer than %zu bytes", bufsz - 1);
		}
		buf[n++] = (char)ch;
	}
	buf[n] = '\0';
	return 1;
}

/*
 * The options a per-user file (user_config_dir) may set: those that act
 * only after the login, in the session's own processes. Listening,
 * limits, the login itself (PAM, user lists, TLS), the log files, the
 * sandbox and what the listener derives at start cannot differ per user.
 * A list of what is allowed, not of what is not: an option added later
 * stays out of per-user files until it is known to act per session.
 */
static const char *const per_session_options[] = {
	"local_root", "user_sub_token", "anon_root", "chroot_local_user",
	"allow_writeable_chroot", "guest_username", "virtual_use_local_privs",
	"dirmessage_enable", "message_file",
	"write_enable", "anon_upload_enable", "anon_mkdir_write_enable",
	"anon_world_readable_only", "anon_other_write_enable", "local_umask",
	"anon_umask", "file_open_mode", "chmod_enable", "cmds_allowed", "cmds_denied",
	"dirlist_enable", "download_enable", "ascii_upload_enable",
	"ascii_download_enable", "hide_file", "deny_file", "hide_ids", "use_localtime",
	"force_dot_files", "delete_failed_uploads", "mdtm_write", "lock_upload_files",
	"tilde_user_enable",
	"pasv_enable", "pasv_min_port", "pasv_max_port", "pasv_promiscuous",
	"port_enable", "port_promiscuous", "use_sendfile", "local_max_rate",
	"anon_max_rate", "trans_chunk_size", "force_local_data_ssl", "force_anon_data_ssl",
	"idle_session_timeout", "data_connection_timeout", "accept_timeout",
	"connect_timeout", "xferlog_enable", "log_ftp_protocol",
};

int
config_is_per_session(const char *name)
{
	const struct cfg_desc *d = cfg_lookup(name);
	size_t i;

	if (d == NULL)
		return 0;
	for (i = 0; i < TW_ARRAY_LEN(per_session_options); i++)
		if (strcmp(per_session_options[i], d->name) == 0)
			return 1;
	return 0;
}

/*
 * A line of a per-user file that names a known option outside the
 * per-session set: 1 after a note, so that the caller skips it.
 */
static int
skip_global_option(const char *text, const char *origin, unsigned line,
		   cfg_report_fn report, void *ctx)
{
	char name[CONFIG_MAX_LINE + 1], qn[MSG_QUOTE_MAX + 8], note[CONFIG_MAX_MSG];
	const char *eq = strchr(text, '=');
	size_t n;

	if (eq == NULL)
		return 0;
	n = (size_t)(eq - text);
	memcpy(name, text, n);
	name[n] = '\0';
	if (cfg_lookup(name) == NULL || config_is_per_session(name))
		return 0;
	quote_for_msg(qn, sizeof(qn), name);
	(void)cfg_error(note, sizeof(note), origin, line,
	    "option '%s' ignored: a per-user file sets only options that act after the login",
	    qn);
	report(ctx, CFG_NOTE, note);
	return 1;
}

/*
 * A per-user file is read by a root process at a login: a file anybody
 * could have written would hand its options to whoever wrote it.
 */
static const char *
user_file_unsafe(const struct stat *st)
{
	if (st->st_uid != 0)
		return "not owned by root";
	if ((st->st_mode & S_IWOTH) != 0)
		return "writable by others";
	return NULL;
}

static unsigned
load_file(struct tw_config *c, const char *path, int per_user, cfg_report_fn report,
	  void *ctx)
{
	char err[CONFIG_MAX_MSG];
	const char *why;
	char *buf;
	struct stat st;
	unsigned lineno = 0, errors = 0;
	FILE *f = NULL;
	int fd, r;

	/* O_NONBLOCK: a FIFO given as the config must not hang the start. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1) {
		(void)cfg_error(err, sizeof(err), path, 0, "%s", strerror(errno));
		report(ctx, CFG_ERROR, err);
		return 1;
	}
	why = NULL;
	if (fstat(fd, &st) == -1)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (per_user && (why = user_file_unsafe(&st)) != NULL)
		;
	else if ((f = fdopen(fd, "r")) == NULL)
		why = strerror(errno);
	if (why != NULL) {
		/* Read-only: closing it cannot lose anything. */
		(void)close(fd);
		(void)cfg_error(err, sizeof(err), path, 0, "%s", why);
		report(ctx, CFG_ERROR, err);
		return 1;
	}
	if ((buf = malloc(CONFIG_MAX_LINE + 1)) == NULL)
		die("%s: out of memory", __func__);

	for (;;) {
		lineno++;
		r = read_config_line(f, buf, CONFIG_MAX_LINE + 1, path, lineno,
		    err, sizeof(err));
		if (r == 0)
			break;
		if (r == -1) {
			report(ctx, CFG_ERROR, err);
			errors++;
			if (ferror(f))
				break;
			continue;
		}
		if (is_comment_or_blank(buf))
			continue;
		if (per_user && skip_global_option(buf, path, lineno, report, ctx))
			continue;
		errors += config_apply_line_all(c, buf, path, lineno, report, ctx);
	}
	free(buf);
	/* Read-only: every byte was already read, or the error said why. */
	(void)fclose(f);
	return errors;
}

unsigned
config_load_file_all(struct tw_config *c, const char *path, cfg_report_fn report, void *ctx)
{
	return load_file(c, path, 0, report, ctx);
}

unsigned
config_load_user_file_all(struct tw_config *c, const char *path, cfg_report_fn report,
			  void *ctx)
{
	return load_file(c, path, 1, report, ctx);
}

/* The first error, for the callers that stop at one. */
struct first_error {
	char *err;
	size_t errlen;
	int have;
};

static void
keep_first_error(void *ctx, enum cfg_severity sev, const char *msg)
{
	struct first_error *fe = ctx;

	if (sev != CFG_ERROR || fe->have)
		return;
	fe->have = 1;
	if (fe->err != NULL && fe->errlen > 0)
		(void)tw_strlcpy(fe->err, msg, fe->errlen);
}

int
config_load_file(struct tw_config *c, const char *path, char *err, size_t errlen)
{
	struct first_error fe = { err, errlen, 0 };

	return config_load_file_all(c, path, keep_first_error, &fe) == 0 ? 0 : -1;
}

static int
check_addr(const char *name, const char *value, int af, char *err, size_t errlen)
{
	unsigned char addr[16];
	char qv[MSG_QUOTE_MAX + 8];

	if (value[0] == '\0' || inet_pton(af, value, addr) == 1)
		return 0;
	quote_for_msg(qv, sizeof(qv), value);
	return cfg_error(err, errlen, NULL, 0,
	    "option '%s': '%s' is not a numeric %s address", name, qv,
	    af == AF_INET ? "IPv4" : "IPv6");
}

static int
check_cidr_list(const char *name, const char *value, char *err, size_t errlen)
{
	struct sa_cidr_list l;
	char qv[MSG_QUOTE_MAX + 8];

	if (sa_cidr_list_parse(value, &l) == 0)
		return 0;
	quote_for_msg(qv, sizeof(qv), value);
	return cfg_error(err, errlen, NULL, 0,
	    "option '%s': '%s' is not a list of at most %d addresses or networks "
	    "(address[/bits], separated by commas)", name, qv, SA_CIDR_MAX);
}

/* An empty value passes unless required; a set one must be absolute. */
static int
check_path(const char *name, const char *value, int required,
	   char *err, size_t errlen)
{
	if (value[0] == '\0') {
		if (!required)
			return 0;
		return cfg_error(err, errlen, NULL, 0,
		    "option '%s' must be set", name);
	}
	if (value[0] != '/')
		return cfg_error(err, errlen, NULL, 0,
		    "option '%s' must be an absolute path", name);
	return 0;
}

/* A comma-separated list of FTP verbs: letters, each verb 3 or 4 long. */
static int
check_verb_list(const char *name, const char *list, char *err, size_t errlen)
{
	const char *p = list;

	while (*p != '\0') {
		size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

		if (len < 3 || len > 4 || (p[len] != ',' && p[len] != '\0'))
			return cfg_error(err, errlen, NULL, 0,
			    "option '%s': expected FTP commands separated by commas, "
			    "such as PASV,RETR,QUIT", name);
		p += len;
		if (*p == ',' && *++p == '\0')
			return cfg_error(err, errlen, NULL, 0,
			    "option '%s': ends with a comma", name);
	}
	return 0;
}

/* The TLS options' rules; the files themselves are checked by tls.c. */
static int
config_check_tls(const struct tw_config *c, char *err, size_t errlen)
{
	if (!c->ssl_enable) {
		if (c->implicit_ssl || c->implicit_ssl_port)
			return cfg_error(err, errlen, NULL, 0,
			    "implicit_ssl and implicit_ssl_port need ssl_enable=YES");
		return 0;
	}
	if (check_path("rsa_cert_file", c->rsa_cert_file, 1, err, errlen) ||
	    check_path("rsa_private_key_file", c->rsa_private_key_file, 0, err, errlen) ||
	    check_path("ca_certs_file", c->ca_certs_file,
		c->validate_cert || c->require_cert, err, errlen) ||
	    check_path("dh_param_file", c->dh_param_file, 0, err, errlen) ||
	    check_path("ecdh_param_file", c->ecdh_param_file, 0, err, errlen))
		return -1;
	if (!c->ssl_tlsv1_2 && !c->ssl_tlsv1_3)
		return cfg_error(err, errlen, NULL, 0,
		    "ssl_enable needs ssl_tlsv1_2 or ssl_tlsv1_3: no older protocol is offered");
	if (c->implicit_ssl_port &&
	    (c->implicit_ssl || c->implicit_ssl_port == c->listen_port))
		return cfg_error(err, errlen, NULL, 0,
		    "implicit_ssl_port needs implicit_ssl=NO and a port other than listen_port");
	if (c->implicit_ssl_port && !c->listen && !c->listen_ipv6)
		return cfg_error(err, errlen, NULL, 0,
		    "implicit_ssl_port needs standalone mode (listen or listen_ipv6)");
	return 0;
}

int
config_implicit_tls(const struct tw_config *c, unsigned local_port)
{
	if (!c->ssl_enable)
		return 0;
	return c->implicit_ssl || (c->implicit_ssl_port != 0 && local_port == c->implicit_ssl_port);
}

const char *
config_tls_login_refusal(const struct tw_config *c, int tls, int anonymous)
{
	if (!c->ssl_enable)
		return NULL;
	if (!tls) {
		if (anonymous && c->allow_anon_ssl && c->force_anon_logins_ssl)
			return "Anonymous sessions must use encryption.";
		if (!anonymous && c->force_local_logins_ssl)
			return "Non-anonymous sessions must use encryption.";
		return NULL;
	}
	return anonymous && !c->allow_anon_ssl ? "Anonymous sessions may not use encryption."
					       : NULL;
}

int
config_pasv_is_name(const struct tw_config *c)
{
	const char *p = c->pasv_address;
	struct in_addr a;
	int letter = 0;

	if (*p == '\0')
		return 0;
	if (c->pasv_addr_resolve)
		return 1;
	if (inet_pton(AF_INET, p, &a) == 1)
		return 0;
	/* Letters, digits, '-' and '.', as a host name is written, with a
	 * letter: digits and dots alone are a mistyped address (and
	 * "010.0.0.1" would resolve, as octal, to 8.0.0.1). */
	for (; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
			return 0;
		letter |= isalpha((unsigned char)*p) != 0;
	}
	return letter;
}

void
config_pasv_range(const struct tw_config *c, unsigned *lo, unsigned *hi)
{
	unsigned l = c->pasv_min_port, h = c->pasv_max_port;

	*lo = *hi = 0;
	if (l == 0 && h == 0)
		return;
	/* Bounds given the wrong way round: the range between them (vsftpd
	 * would run from pasv_min_port to 65535). */
	if (l > h && h > PASV_LOWEST) {
		unsigned t = l;

		l = h;
		h = t;
	}
	/* vsftpd's reading (privops.c): a bound at 0 or out of range is
	 * 1024 for the lowest, 65535 for the highest. */
	*lo = l > PASV_LOWEST ? l : PASV_LOWEST;
	*hi = h >= *lo && h < 65535 ? h : 65535;
}

void
config_warnings(const struct tw_config *c, void (*warn)(const char *msg))
{
	unsigned lo, hi;

	if (c->ssl_enable && (c->ssl_tlsv1 || c->ssl_tlsv1_1 || c->ssl_sslv2 || c->ssl_sslv3))
		warn("ssl_tlsv1, ssl_tlsv1_1, ssl_sslv2 and ssl_sslv3 are ignored: "
		     "only TLS 1.2 and 1.3 are offered");
	config_pasv_range(c, &lo, &hi);
	if ((c->pasv_min_port != 0 || c->pasv_max_port != 0) &&
	    (lo != c->pasv_min_port || hi != c->pasv_max_port)) {
		char msg[160];

		(void)snprintf(msg, sizeof(msg), "pasv_min_port=%u and pasv_max_port=%u: PASV "
			       "uses ports %u to %u", c->pasv_min_port, c->pasv_max_port, lo, hi);
		warn(msg);
	}
	if (!c->pasv_addr_resolve && config_pasv_is_name(c)) {
		char msg[CONFIG_MAX_STR + 160];

		(void)snprintf(msg, sizeof(msg), "pasv_address %s is a host name: it is "
			       "resolved at start and reload, as with pasv_addr_resolve=YES "
			       "(vsftpd would end each session at PASV)", c->pasv_address);
		warn(msg);
	}
	if (!c->anonymous_enable_written && c->anonymous_enable)
		warn("anonymous_enable is not set: anonymous logins are allowed (vsftpd's "
		     "default; set anonymous_enable=NO to refuse them)");
	if (!c->local_enable_written && !c->local_enable)
		warn("local_enable is not set: local users cannot log in (vsftpd's default; set "
		     "local_enable=YES to let them)");
	if (!c->seccomp_sandbox)
		warn("seccomp_sandbox=NO turned off vsftpd's own filter; twinftpd's stay on "
		     "where the kernel takes them, and only where it does not do sessions run "
		     "without (seccomp_log_only is the debugging switch)");
	/* vsftpd starts so too (docker images append pasv_address later). */
	if (c->pasv_addr_resolve && c->pasv_address[0] == '\0')
		warn("pasv_addr_resolve=YES without pasv_address resolves nothing: PASV "
		     "announces the address the client connected to");
}

/* Reports err when failed (a check's -1); counts it in *n. */
static void
tally(int failed, const char *err, cfg_report_fn report, void *ctx, unsigned *n)
{
	if (failed == 0)
		return;
	report(ctx, CFG_ERROR, err);
	(*n)++;
}

unsigned
config_check_all(const struct tw_config *c, cfg_report_fn report, void *ctx)
{
	char e[CONFIG_MAX_MSG];
	unsigned n = 0;

	tally(check_addr("listen_address", c->listen_address, AF_INET, e, sizeof(e)),
	    e, report, ctx, &n);
	tally(check_addr("listen_address6", c->listen_address6, AF_INET6, e, sizeof(e)),
	    e, report, ctx, &n);
	/* A host name is resolved at start (config_pasv_is_name; and with
	 * pasv_addr_resolve but no pasv_address, config_warnings says so). */
	if (!config_pasv_is_name(c))
		tally(check_addr("pasv_address", c->pasv_address, AF_INET, e, sizeof(e)),
		    e, report, ctx, &n);

	/*
	 * The pre-login worker's jail: "/" or a relative path would give the
	 * process that parses network input the whole file system.
	 */
	if (check_path("secure_chroot_dir", c->secure_chroot_dir, 1, e, sizeof(e)))
		tally(-1, e, report, ctx, &n);
	else if (strcmp(c->secure_chroot_dir, "/") == 0)
		tally(cfg_error(e, sizeof(e), NULL, 0,
		    "option 'secure_chroot_dir' must not be /"), e, report, ctx, &n);
	if (c->nopriv_user[0] == '\0' || strcmp(c->nopriv_user, "root") == 0)
		tally(cfg_error(e, sizeof(e), NULL, 0,
		    "option 'nopriv_user' must name an unprivileged user, not '%s'",
		    c->nopriv_user), e, report, ctx, &n);

	tally(check_path("anon_root", c->anon_root, 0, e, sizeof(e)), e, report, ctx, &n);
	tally(check_path("banner_file", c->banner_file, 0, e, sizeof(e)), e, report, ctx, &n);
	tally(check_path("local_root", c->local_root, 0, e, sizeof(e)), e, report, ctx, &n);
	tally(check_path("user_config_dir", c->user_config_dir, 0, e, sizeof(e)),
	    e, report, ctx, &n);
	if (c->guest_enable && (c->guest_username[0] == '\0' ||
	    strcmp(c->guest_username, "root") == 0))
		tally(cfg_error(e, sizeof(e), NULL, 0,
		    "guest_enable needs guest_username, an account other than root"),
		    e, report, ctx, &n);
	if (c->chown_uploads && c->chown_username[0] == '\0')
		tally(cfg_error(e, sizeof(e), NULL, 0,
		    "chown_uploads needs chown_username"), e, report, ctx, &n);
	tally(check_path("chroot_list_file", c->chroot_list_file, c->chroot_list_enable,
	    e, sizeof(e)), e, report, ctx, &n);
	tally(check_path("userlist_file", c->userlist_file, c->userlist_enable, e, sizeof(e)),
	    e, report, ctx, &n);
	tally(check_path("log_file", c->log_file, c->xferlog_enable && !c->syslog_enable,
	    e, sizeof(e)), e, report, ctx, &n);
	tally(check_path("xferlog_file", c->xferlog_file, c->xferlog_enable &&
	    (c->xferlog_std_format || c->dual_log_enable), e, sizeof(e)), e, report, ctx, &n);
	tally(check_verb_list("cmds_allowed", c->cmds_allowed, e, sizeof(e)), e, report, ctx, &n);
	tally(check_verb_list("cmds_denied", c->cmds_denied, e, sizeof(e)), e, report, ctx, &n);
	if (c->anonymous_enable && c->ftp_username[0] == '\0')
		tally(cfg_error(e, sizeof(e), NULL, 0,
		    "anonymous_enable needs ftp_username to be set"), e, report, ctx, &n);
	/* A path names its last part (Linux-PAM's reading; startcheck.c). */
	if (c->local_enable && (c->pam_service_name[0] == '\0' ||
	    c->pam_service_name[strlen(c->pam_service_name) - 1] == '/'))
		tally(cfg_error(e, sizeof(e), NULL, 0,
		    "local_enable needs pam_service_name, a service name"), e, report, ctx, &n);
	tally(check_cidr_list("proxy_protocol_trusted", c->proxy_protocol_trusted, e, sizeof(e)),
	    e, report, ctx, &n);
	tally(config_check_tls(c, e, sizeof(e)), e, report, ctx, &n);
	return n;
}

int
config_check(const struct tw_config *c, char *err, size_t errlen)
{
	struct first_error fe = { err, errlen, 0 };

	return config_check_all(c, keep_first_error, &fe) == 0 ? 0 : -1;
}

/*
 * The output is what -t and the man page test rely on: a short write
 * (a full disk, a closed pipe) must show, so one check at the end, after
 * the flush, stands for every fprintf (stdio keeps the error sticky).
 */
static int
finish_output(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

int
config_print(const struct tw_config *c, FILE *out)
{
	size_t i;

	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];
		const char *field = (const char *)c + d->offset;

		switch (d->type) {
		case CFG_T_BOOL:
			fprintf(out, "%s=%s\n", d->name,
			    *(const int *)(const void *)field ? "YES" : "NO");
			break;
		case CFG_T_UINT:
			fprintf(out, "%s=%u\n", d->name,
			    *(const unsigned int *)(const void *)field);
			break;
		case CFG_T_OCTAL:
			fprintf(out, "%s=0%03o\n", d->name,
			    *(const unsigned int *)(const void *)field);
			break;
		case CFG_T_STR:
			fprintf(out, "%s=%s\n", d->name, field);
			break;
		}
	}
	return finish_output(out);
}

/*
 * Roff source lines of the generated section stay shorter than this, so
 * that the page reads and diffs in an 80-column terminal; tests/check_man.sh
 * fails on a longer one.
 */
#define MAN_SOURCE_COLUMNS 80

/* A backslash is roff's escape character; it is written as "\e". */
#define MAN_ESCAPED_BACKSLASH "\\e"

/*
 * A '.' or '\'' at the start of a line would be read as a request; a
 * zero-width character in front makes it text.
 */
#define MAN_REQUEST_GUARD "\\&"

static int
man_needs_guard(const char *s, int at_line_start)
{
	return at_line_start && (*s == '.' || *s == '\'');
}

/* Columns the first len bytes of s take once man_text has escaped them. */
static size_t
man_text_width(const char *s, size_t len, int at_line_start)
{
	size_t i, w = len;

	if (len > 0 && man_needs_guard(s, at_line_start))
		w += strlen(MAN_REQUEST_GUARD);
	for (i = 0; i < len; i++)
		if (s[i] == '\\')
			w += strlen(MAN_ESCAPED_BACKSLASH) - 1;
	return w;
}

/* Writes the first len bytes of s as roff text. */
static void
man_text(FILE *out, const char *s, size_t len, int at_line_start)
{
	size_t i;

	if (len > 0 && man_needs_guard(s, at_line_start))
		fputs(MAN_REQUEST_GUARD, out);
	for (i = 0; i < len; i++) {
		if (s[i] == '\\')
			fputs(MAN_ESCAPED_BACKSLASH, out);
		else
			fputc(s[i], out);
	}
}

/*
 * Writes s as filled roff text, broken between words into source lines
 * shorter than MAN_SOURCE_COLUMNS. Filling joins them again on output,
 * so where the breaks fall changes only the source. A word too long for
 * a line of its own stands alone on its line.
 */
static void
man_wrapped_text(FILE *out, const char *s)
{
	size_t col = 0, len, w;

	for (;;) {
		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		len = strcspn(s, " ");
		w = man_text_width(s, len, col == 0);
		if (col > 0 && col + 1 + w >= MAN_SOURCE_COLUMNS) {
			fputc('\n', out);
			col = 0;
			w = man_text_width(s, len, 1);
		}
		if (col > 0) {
			fputc(' ', out);
			col++;
		}
		man_text(out, s, len, col == 0);
		col += w;
		s += len;
	}
	fputc('\n', out);
}

static void
man_default(FILE *out, const struct cfg_desc *d)
{
	switch (d->type) {
	case CFG_T_BOOL:
		fprintf(out, "Default: \\fB%s\\fR\n", d->def_num ? "YES" : "NO");
		break;
	case CFG_T_UINT:
		fprintf(out, "Default: \\fB%llu\\fR (from %llu to %llu)\n",
		    d->def_num, d->min, d->max);
		break;
	case CFG_T_OCTAL:
		fprintf(out, "Default: \\fB0%03llo\\fR (octal, at most 0%03llo)\n",
		    d->def_num, d->max);
		break;
	case CFG_T_STR:
		if (d->def_str[0] == '\0') {
			fputs("Default: (none)\n", out);
		} else {
			fputs("Default: \\fB", out);
			man_text(out, d->def_str, strlen(d->def_str), 0);
			fputs("\\fR\n", out);
		}
		break;
	}
}

int
config_print_man(FILE *out)
{
	size_t i;

	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];

		fputs(".TP\n.B ", out);
		man_text(out, d->name, strlen(d->name), 0);
		fputs("\n", out);
		man_wrapped_text(out, d->doc);
		fputs(".IP\n", out);
		man_default(out, d);
	}
	return finish_output(out);
}
