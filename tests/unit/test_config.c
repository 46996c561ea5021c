/*
 * Unit tests for src/common/config.c: defaults, every type's parser, names
 * (aliases, vsftpd-only, unknown), the file reader's line handling,
 * cross-option checks and the print/parse round trip.
 */
#include "src/common/config.h"
#include "src/common/util.h"
#include "check.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

static void *
field_of(struct tw_config *c, const struct cfg_desc *d)
{
	return (char *)c + d->offset;
}

static unsigned int
num_of(struct tw_config *c, const struct cfg_desc *d)
{
	if (d->type == CFG_T_BOOL)
		return (unsigned int)*(int *)field_of(c, d);
	return *(unsigned int *)field_of(c, d);
}

/* Collects what config_*_all report, one "E:" or "N:" line each. */
static char reported[8192];

static void
collect(void *ctx, enum cfg_severity sev, const char *msg)
{
	size_t n = strlen(reported);

	(void)ctx;
	snprintf(reported + n, sizeof(reported) - n, "%s%s\n",
		 sev == CFG_ERROR ? "E:" : "N:", msg);
}

static char warned[1024];

/* config_pasv_range of min and max is lo..hi, with a warning holding want. */
#define CHECK_PASV_RANGE(min, max, lo, hi, want) \
	check_pasv_range((min), (max), (lo), (hi), (want), __LINE__)
static void collect_warning(const char *msg);

static void
check_pasv_range(unsigned min, unsigned max, unsigned lo, unsigned hi, const char *want,
		 int line)
{
	struct tw_config c;
	unsigned got_lo, got_hi;

	config_init_defaults(&c);
	c.anonymous_enable_written = c.local_enable_written = 1;
	c.pasv_min_port = min;
	c.pasv_max_port = max;
	config_pasv_range(&c, &got_lo, &got_hi);
	warned[0] = '\0';
	config_warnings(&c, collect_warning);
	if (got_lo != lo || got_hi != hi || (want == NULL ? warned[0] != '\0'
					      : strstr(warned, want) == NULL)) {
		fprintf(stderr, "%s:%d: %u..%u gave %u..%u, warned \"%s\"\n", __FILE__, line,
			min, max, got_lo, got_hi, warned);
		CHECK(0);
	} else {
		CHECK(1);
	}
}

static void
collect_warning(const char *msg)
{
	size_t n = strlen(warned);

	(void)snprintf(warned + n, sizeof(warned) - n, "%s\n", msg);
}

/* Applies "name=value" as line 7 of "t.conf"; returns the result. */
static int
apply(struct tw_config *c, const char *text, char *err, size_t errlen)
{
	err[0] = '\0';
	return config_apply_line(c, text, "t.conf", 7, err, errlen);
}

/* The line must be refused with a message naming file, line and want. */
static void
check_rejected(const char *text, const char *want, int line)
{
	struct tw_config c;
	char err[512];

	config_init_defaults(&c);
	if (apply(&c, text, err, sizeof(err)) != -1) {
		check_failed++;
		fprintf(stderr, "%s:%d: '%s' was accepted\n", __FILE__, line, text);
		return;
	}
	if (strncmp(err, "t.conf:7: ", 10) == 0 && strstr(err, want) != NULL) {
		check_passed++;
	} else {
		check_failed++;
		fprintf(stderr, "%s:%d: '%s' gave \"%s\", want \"%s\"\n",
		    __FILE__, line, text, err, want);
	}
}
#define REJECTED(text, want) check_rejected((text), (want), __LINE__)

static void
test_table(void)
{
	struct tw_config c;
	size_t i, j;

	CHECK(cfg_table_len > 40);
	config_init_defaults(&c);
	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];

		CHECK(d->doc != NULL && d->doc[0] != '\0');
		CHECK(d->offset < sizeof(c));
		for (j = i + 1; j < cfg_table_len; j++) {
			CHECK(strcmp(d->name, cfg_table[j].name) != 0);
			CHECK(d->offset != cfg_table[j].offset);
		}
		if (d->type == CFG_T_STR) {
			CHECK_STR((char *)field_of(&c, d), d->def_str);
		} else {
			CHECK_INT(num_of(&c, d), d->def_num);
			CHECK(d->min <= d->def_num && d->def_num <= d->max);
		}
	}
	/* A few defaults the man page and the example config promise. */
	CHECK_INT(c.listen, 1);
	CHECK_INT(c.listen_port, 21);
	/* vsftpd's: a vsftpd.conf that leaves them out means what it meant. */
	CHECK_INT(c.anonymous_enable, 1);
	CHECK_INT(c.local_enable, 0);
	CHECK_INT(c.local_umask, 077);
	CHECK_STR(c.nopriv_user, "nobody");
}

static void
test_bool(void)
{
	static const struct { const char *s; int v; } good[] = {
		{ "YES", 1 }, { "yes", 1 }, { "Yes", 1 }, { "TRUE", 1 },
		{ "true", 1 }, { "1", 1 }, { "NO", 0 }, { "no", 0 },
		{ "nO", 0 }, { "FALSE", 0 }, { "False", 0 }, { "0", 0 },
	};
	static const char *const bad[] = {
		"", "maybe", "Y", "N", "2", "01", "YESS", "yes no", " YES", "-1",
	};
	struct tw_config c;
	char text[256], err[512];
	size_t i, k;

	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];

		if (d->type != CFG_T_BOOL)
			continue;
		for (k = 0; k < TW_ARRAY_LEN(good); k++) {
			config_init_defaults(&c);
			*(int *)field_of(&c, d) = !good[k].v;
			snprintf(text, sizeof(text), "%s=%s", d->name, good[k].s);
			CHECK_INT(apply(&c, text, err, sizeof(err)), 0);
			CHECK_INT(*(int *)field_of(&c, d), good[k].v);
		}
		for (k = 0; k < TW_ARRAY_LEN(bad); k++) {
			char want[128];

			snprintf(text, sizeof(text), "%s=%s", d->name, bad[k]);
			snprintf(want, sizeof(want), "option '%s': expected YES or NO",
			    d->name);
			REJECTED(text, want);
		}
	}
}

static void
test_uint(void)
{
	struct tw_config c;
	char text[256], err[512], want[128];
	size_t i;

	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];

		if (d->type != CFG_T_UINT)
			continue;
		config_init_defaults(&c);
		snprintf(text, sizeof(text), "%s=%llu", d->name, d->min);
		CHECK_INT(apply(&c, text, err, sizeof(err)), 0);
		CHECK_INT(num_of(&c, d), d->min);
		snprintf(text, sizeof(text), "%s=%llu", d->name, d->max);
		CHECK_INT(apply(&c, text, err, sizeof(err)), 0);
		CHECK_INT(num_of(&c, d), d->max);
		snprintf(text, sizeof(text), "%s=%llu", d->name, (d->min + d->max) / 2);
		CHECK_INT(apply(&c, text, err, sizeof(err)), 0);
		CHECK_INT(num_of(&c, d), (d->min + d->max) / 2);

		snprintf(want, sizeof(want), "option '%s': must be between %llu and %llu",
		    d->name, d->min, d->max);
		snprintf(text, sizeof(text), "%s=%llu", d->name, d->max + 1);
		REJECTED(text, want);
		if (d->min > 0) {
			snprintf(text, sizeof(text), "%s=%llu", d->name, d->min - 1);
			REJECTED(text, want);
		}
		snprintf(text, sizeof(text), "%s=99999999999999999999999", d->name);
		REJECTED(text, want);

		snprintf(want, sizeof(want), "option '%s': expected a decimal number",
		    d->name);
		snprintf(text, sizeof(text), "%s=", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=-1", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=+5", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=0x10", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=1.5", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=YES", d->name);
		REJECTED(text, want);
	}
	REJECTED("listen_port=0", "must be between 1 and 65535");
	REJECTED("listen_port=65536", "must be between 1 and 65535");
}

static void
test_octal(void)
{
	struct tw_config c;
	char text[256], err[512], want[128];
	size_t i;

	config_init_defaults(&c);
	CHECK_INT(apply(&c, "local_umask=022", err, sizeof(err)), 0);
	CHECK_INT(c.local_umask, 022);
	CHECK_INT(apply(&c, "local_umask=0022", err, sizeof(err)), 0);
	CHECK_INT(c.local_umask, 022);
	CHECK_INT(apply(&c, "local_umask=77", err, sizeof(err)), 0);
	CHECK_INT(c.local_umask, 077);
	CHECK_INT(apply(&c, "local_umask=0", err, sizeof(err)), 0);
	CHECK_INT(c.local_umask, 0);
	CHECK_INT(apply(&c, "file_open_mode=0644", err, sizeof(err)), 0);
	CHECK_INT(c.file_open_mode, 0644);
	CHECK_INT(apply(&c, "file_open_mode=07777", err, sizeof(err)), 0);
	CHECK_INT(c.file_open_mode, 07777);

	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];

		if (d->type != CFG_T_OCTAL)
			continue;
		config_init_defaults(&c);
		snprintf(text, sizeof(text), "%s=0%llo", d->name, d->max);
		CHECK_INT(apply(&c, text, err, sizeof(err)), 0);
		CHECK_INT(num_of(&c, d), d->max);

		snprintf(want, sizeof(want), "option '%s': must be at most 0%03llo",
		    d->name, d->max);
		snprintf(text, sizeof(text), "%s=0%llo", d->name, d->max + 1);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=0777777777777777777777777", d->name);
		REJECTED(text, want);

		snprintf(want, sizeof(want), "option '%s': expected an octal number",
		    d->name);
		snprintf(text, sizeof(text), "%s=", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=08", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=9", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=0x1f", d->name);
		REJECTED(text, want);
		snprintf(text, sizeof(text), "%s=-022", d->name);
		REJECTED(text, want);
	}
}

static void
test_string(void)
{
	struct tw_config c;
	char text[CONFIG_MAX_STR + 64], err[512];

	config_init_defaults(&c);
	CHECK_INT(apply(&c, "ftpd_banner=Welcome to the archive", err, sizeof(err)), 0);
	CHECK_STR(c.ftpd_banner, "Welcome to the archive");
	/* Trailing blanks and CR go, leading ones and inner '=' stay. */
	CHECK_INT(apply(&c, "ftpd_banner= a=b \t \r", err, sizeof(err)), 0);
	CHECK_STR(c.ftpd_banner, " a=b");
	CHECK_INT(apply(&c, "ftpd_banner=", err, sizeof(err)), 0);
	CHECK_STR(c.ftpd_banner, "");

	/* The longest value that fits, then one byte more. */
	memcpy(text, "ftpd_banner=", 12);
	memset(text + 12, 'x', CONFIG_MAX_STR - 1);
	text[12 + CONFIG_MAX_STR - 1] = '\0';
	CHECK_INT(apply(&c, text, err, sizeof(err)), 0);
	CHECK_INT(strlen(c.ftpd_banner), CONFIG_MAX_STR - 1);
	text[12 + CONFIG_MAX_STR - 1] = 'x';
	text[12 + CONFIG_MAX_STR] = '\0';
	config_init_defaults(&c);
	REJECTED(text, "option 'ftpd_banner': value is 1024 bytes long, at most 1023");
	/* Refused means untouched, not truncated. */
	CHECK_INT(apply(&c, text, err, sizeof(err)), -1);
	CHECK_STR(c.ftpd_banner, "");

	REJECTED("ftpd_banner=two\rlines", "option 'ftpd_banner': value contains a control character");
	REJECTED("ftpd_banner=esc\x1b[31m", "control character");
	REJECTED("log_file=/tmp/\x7f", "control character");
}

static void
test_names(void)
{
	struct tw_config c;
	char err[512];

	config_init_defaults(&c);
	CHECK_INT(apply(&c, "vsftpd_log_file=/var/log/other.log", err, sizeof(err)), 0);
	CHECK_STR(c.log_file, "/var/log/other.log");
	/* vsftpd 3.0.5's spellings of the TLS version switches. */
	CHECK_INT(apply(&c, "ssl_tlsv13=NO", err, sizeof(err)), 0);
	CHECK_INT(c.ssl_tlsv1_3, 0);
	CHECK_INT(apply(&c, "ssl_tlsv12=YES", err, sizeof(err)), 0);
	CHECK_INT(c.ssl_tlsv1_2, 1);
	CHECK_INT(apply(&c, "ssl_tlsv11=NO", err, sizeof(err)), 0);
	CHECK_INT(c.ssl_tlsv1_1, 0);
	CHECK_INT(apply(&c, "ssl_tlsv13=YES", err, sizeof(err)), 0);
	/* Built now: taken. */
	CHECK_INT(apply(&c, "trans_chunk_size=8192", err, sizeof(err)), 0);
	CHECK_INT(c.trans_chunk_size, 8192);
	CHECK_INT(apply(&c, "delay_successful_login=2", err, sizeof(err)), 0);
	CHECK_INT(c.delay_successful_login, 2);
	REJECTED("delay_successful_login=61", "delay_successful_login");
	/* A comment after a number or an IPv4 address: vsftpd stops before it. */
	config_init_defaults(&c);
	reported[0] = '\0';
	CHECK_INT(config_apply_line_all(&c, "max_clients=5 #EDIT HERE", "t.conf", 3, collect,
					NULL), 0);
	CHECK_INT(c.max_clients, 5);
	CHECK(strstr(reported, "N:t.conf:3: option 'max_clients': the comment after '5' is "
		     "ignored") != NULL);
	CHECK_INT(config_apply_line_all(&c, "listen_address=192.168.122.1  # virbr0", "t.conf",
					4, collect, NULL), 0);
	CHECK_STR(c.listen_address, "192.168.122.1");
	CHECK_INT(config_apply_line_all(&c, "local_umask=022\t# group reads", "t.conf", 5,
					collect, NULL), 0);
	CHECK_INT(c.local_umask, 022);
	REJECTED("max_clients=5#no blank", "expected a decimal number");
	REJECTED("max_clients=# only", "expected a decimal number");
	REJECTED("anonymous_enable=YES # not for YES", "expected YES or NO");
	CHECK_INT(apply(&c, "ftpd_banner=Hi # all of it", err, sizeof(err)), 0);
	CHECK_STR(c.ftpd_banner, "Hi # all of it");
	/* Red Hat's package's options. */
	CHECK_INT(apply(&c, "userlist_log=YES", err, sizeof(err)), 0);
	CHECK_INT(c.userlist_log, 1);
	CHECK_INT(apply(&c, "reverse_lookup_enable=NO", err, sizeof(err)), 0);
	CHECK_INT(c.reverse_lookup_enable, 0);
	CHECK_INT(apply(&c, "ecdh_param_file=/etc/pki/ec.pem", err, sizeof(err)), 0);
	CHECK_STR(c.ecdh_param_file, "/etc/pki/ec.pem");
	CHECK_INT(apply(&c, "better_stou=YES", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "log_die=YES", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "bind_retries=9", err, sizeof(err)), 0);

	REJECTED("dsa_cert_file=/etc/x.pem",
	    "option 'dsa_cert_file' is a vsftpd option that twinftpd does not support");
	/* Built now: taken. */
	CHECK_INT(apply(&c, "guest_enable=YES", err, sizeof(err)), 0);
	CHECK_INT(c.guest_enable, 1);
	REJECTED("ptrace_sandbox=YES", "vsftpd option that twinftpd does not support");
	REJECTED("http_enable=YES", "only http_enable=NO, which changes nothing");
	CHECK_INT(apply(&c, "tilde_user_enable=YES", err, sizeof(err)), 0);
	CHECK_INT(c.tilde_user_enable, 1);
	CHECK_INT(apply(&c, "session_support=YES", err, sizeof(err)), 0);
	CHECK_INT(c.session_support, 1);
	CHECK_INT(apply(&c, "tcp_wrappers=YES", err, sizeof(err)), 0);
	CHECK_INT(c.tcp_wrappers, 1);
	CHECK_INT(apply(&c, "force_dot_files=YES", err, sizeof(err)), 0);
	CHECK_INT(c.force_dot_files, 1);
	CHECK_INT(apply(&c, "passwd_chroot_enable=YES", err, sizeof(err)), 0);
	CHECK_INT(c.passwd_chroot_enable, 1);
	CHECK_INT(apply(&c, "delete_failed_uploads=YES", err, sizeof(err)), 0);
	CHECK_INT(c.delete_failed_uploads, 1);
	CHECK_INT(apply(&c, "chown_uploads=YES", err, sizeof(err)), 0);
	REJECTED("chown_upload_mode=4755", "at most 0777");
	/* Built now: taken as the filter it is. */
	CHECK_INT(apply(&c, "deny_file={*.mp3,.private}", err, sizeof(err)), 0);
	CHECK_STR(c.deny_file, "{*.mp3,.private}");
	CHECK_INT(apply(&c, "hide_file=*.iso", err, sizeof(err)), 0);
	CHECK_STR(c.hide_file, "*.iso");
	REJECTED("trans_chunk_size=x", "expected a decimal number");
	REJECTED("ftp_enable=NO", "only ftp_enable=YES");
	CHECK_INT(apply(&c, "run_as_launching_user=YES", err, sizeof(err)), 0);
	REJECTED("dsa_cert_file=/x", "only dsa_cert_file= with no value");
	REJECTED("no_such_vsftpd_thing=NO", "unknown option");
	/* vsftpd options whose value changes nothing here: accepted. */
	CHECK_INT(apply(&c, "ptrace_sandbox=NO", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "tcp_wrappers=no", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "one_process_model=NO", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "async_abor_enable=YES", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "utf8_filesystem=NO", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "trans_chunk_size=000", err, sizeof(err)), 0);
	/* Built now, no longer inert: any rate is taken. */
	CHECK_INT(apply(&c, "anon_max_rate=200000", err, sizeof(err)), 0);
	CHECK_INT((int)c.anon_max_rate, 200000);
	CHECK_INT(apply(&c, "local_max_rate=1", err, sizeof(err)), 0);
	CHECK_INT((int)c.local_max_rate, 1);
	REJECTED("local_max_rate=x", "local_max_rate");
	CHECK_INT(apply(&c, "chown_upload_mode=600", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "chown_username=root", err, sizeof(err)), 0);
	CHECK_INT(apply(&c, "user_config_dir=", err, sizeof(err)), 0);
	REJECTED("lisen=YES", "unknown option 'lisen'");
	REJECTED("LISTEN=YES", "unknown option 'LISTEN'");
	REJECTED("listen =YES", "no spaces allowed");
	REJECTED(" listen=YES", "no spaces allowed");
	REJECTED("\tlisten=YES", "no spaces allowed");
	REJECTED("listen", "expected name=value, not 'listen'");
	REJECTED("=YES", "expected name=value");
	REJECTED("", "expected name=value");
	/* Garbage is shown defanged and bounded. */
	REJECTED("bad\x01\x1bname=1", "unknown option 'bad??name'");
	CHECK_INT(apply(&c, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1",
	    err, sizeof(err)), -1);
	CHECK(strstr(err, "...'") != NULL);
	CHECK(strlen(err) < 128);

	/* -o settings have no line number. */
	CHECK_INT(config_apply_line(&c, "listen=perhaps", "-o", 0, err, sizeof(err)), -1);
	CHECK_STR(err, "-o: option 'listen': expected YES or NO, not 'perhaps'");
	CHECK_INT(config_apply_line(&c, "listen_port=2121", "-o", 0, err, sizeof(err)), 0);
	CHECK_INT(c.listen_port, 2121);

	/* A tiny or missing error buffer is not overrun. */
	memset(err, 'Z', sizeof(err));
	CHECK_INT(config_apply_line(&c, "nosuch=1", "t.conf", 1, err, 8), -1);
	CHECK_INT(strlen(err), 7);
	CHECK_INT(err[8], 'Z');
	CHECK_INT(config_apply_line(&c, "nosuch=1", "t.conf", 1, NULL, 0), -1);

	/* A line far longer than any buffer in the parser. */
	{
		size_t n = 3 * CONFIG_MAX_LINE;
		char *big = malloc(n + 1);

		CHECK(big != NULL);
		memset(big, 'a', n);
		big[n] = '\0';
		CHECK_INT(apply(&c, big, err, sizeof(err)), -1);
		big[n / 2] = '=';
		CHECK_INT(apply(&c, big, err, sizeof(err)), -1);
		memcpy(big, "ftpd_banner=", 12);
		CHECK_INT(apply(&c, big, err, sizeof(err)), -1);
		CHECK(strstr(err, "too long") != NULL || strstr(err, "long,") != NULL);
		free(big);
	}
}

static void
write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* Loads data as a file; returns the result, err holds the message. */
static int
load(struct tw_config *c, const char *data, size_t len, char *path,
     size_t pathsz, char *err, size_t errlen)
{
	int r;

	snprintf(path, pathsz, "%s/t.conf", tmpdir);
	write_file(path, data, len);
	config_init_defaults(c);
	err[0] = '\0';
	r = config_load_file(c, path, err, errlen);
	unlink(path);
	return r;
}

#define LOAD(c, s) load((c), (s), strlen(s), path, sizeof(path), err, sizeof(err))

static void
check_err_at(const char *err, const char *path, unsigned line, const char *want,
	     int srcline)
{
	char prefix[256];

	snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
	if (strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, want) != NULL) {
		check_passed++;
	} else {
		check_failed++;
		fprintf(stderr, "%s:%d: got \"%s\", want \"%s...%s\"\n", __FILE__,
		    srcline, err, prefix, want);
	}
}
#define ERR_AT(line, want) check_err_at(err, path, (line), (want), __LINE__)

static void
test_file(void)
{
	struct tw_config c;
	char path[256], err[512], *big;
	size_t n;

	CHECK_INT(LOAD(&c,
	    "# a comment\n"
	    "\n"
	    "   \t\n"
	    "#listen=NO\n"
	    "listen=NO\r\n"
	    "listen_ipv6=YES\r\n"
	    "listen_port=2121\n"
	    "listen_port=2122\n"
	    "ftpd_banner=Hello there   \r\n"
	    "local_umask=022"), 0);
	CHECK_INT(c.listen, 0);
	CHECK_INT(c.listen_ipv6, 1);
	CHECK_INT(c.listen_port, 2122);		/* last one wins */
	CHECK_STR(c.ftpd_banner, "Hello there");
	CHECK_INT(c.local_umask, 022);		/* no final newline */

	CHECK_INT(LOAD(&c, ""), 0);
	CHECK_INT(c.listen_port, 21);

	CHECK_INT(LOAD(&c, "# ok\n\nlisten=YES\nlisten_port=70000\nlisten=NO\n"), -1);
	ERR_AT(4, "option 'listen_port': must be between 1 and 65535");
	CHECK_INT(LOAD(&c, "anonymous_enable=YES\r\ndsa_cert_file=/x\r\n"), -1);
	ERR_AT(2, "option 'dsa_cert_file' is a vsftpd option that twinftpd does not support");
	CHECK_INT(LOAD(&c, "\n\n\nfoo_bar=1\n"), -1);
	ERR_AT(4, "unknown option 'foo_bar'");
	CHECK_INT(LOAD(&c, "  listen=YES\n"), -1);
	ERR_AT(1, "no spaces allowed");
	CHECK_INT(load(&c, "listen=YES\nlisten=N\0O\n", 22, path, sizeof(path),
	    err, sizeof(err)), -1);
	ERR_AT(2, "NUL byte");

	/* A line of exactly CONFIG_MAX_LINE bytes is read whole... */
	n = CONFIG_MAX_LINE;
	big = malloc(n + 64);
	if (big == NULL)
		abort();
	memset(big, '#', n);
	strcpy(big + n, "\nlisten_port=99\n");
	CHECK_INT(load(&c, big, strlen(big), path, sizeof(path), err, sizeof(err)), 0);
	CHECK_INT(c.listen_port, 99);
	/* ...one byte more is an error, never split into a second setting. */
	memset(big, '#', n - 8);
	strcpy(big + n - 8, "listen=NO\n");
	CHECK_INT(strlen(big), n + 2);
	CHECK_INT(load(&c, big, strlen(big), path, sizeof(path), err, sizeof(err)), -1);
	ERR_AT(1, "line longer than 4096 bytes");
	CHECK_INT(c.listen, 1);
	free(big);

	/* Not a regular file: a directory, a FIFO (which must not hang). */
	config_init_defaults(&c);
	CHECK_INT(config_load_file(&c, tmpdir, err, sizeof(err)), -1);
	CHECK(strstr(err, "not a regular file") != NULL);
	CHECK(strncmp(err, tmpdir, strlen(tmpdir)) == 0);
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK_INT(config_load_file(&c, path, err, sizeof(err)), -1);
	CHECK(strstr(err, "not a regular file") != NULL);
	unlink(path);
	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	CHECK_INT(config_load_file(&c, path, err, sizeof(err)), -1);
	CHECK(strstr(err, "missing.conf: No such file") != NULL);
}

static void
check_check_fails(struct tw_config *c, const char *want, int line)
{
	char err[512];

	err[0] = '\0';
	if (config_check(c, err, sizeof(err)) == -1 && strstr(err, want) != NULL) {
		check_passed++;
	} else {
		check_failed++;
		fprintf(stderr, "%s:%d: config_check gave \"%s\", want \"%s\"\n",
		    __FILE__, line, err, want);
	}
	config_init_defaults(c);
}
#define CHECK_FAILS(c, want) check_check_fails((c), (want), __LINE__)

static void
test_check(void)
{
	struct tw_config c;
	char err[512];

	config_init_defaults(&c);
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);

	/* pasv_address: a host name (with a letter) is resolved at start; digits
	 * and dots that are no address stay an error. */
	config_init_defaults(&c);
	strcpy(c.pasv_address, "ftp.example.org");
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	CHECK_INT(config_pasv_is_name(&c), 1);
	strcpy(c.pasv_address, "203.0.113.300");
	CHECK_FAILS(&c, "'203.0.113.300' is not a numeric IPv4 address");
	strcpy(c.pasv_address, "010.0.0.1");
	CHECK_INT(config_pasv_is_name(&c), 0);
	strcpy(c.pasv_address, "<your-ip>");
	CHECK_FAILS(&c, "is not a numeric IPv4 address");
	config_init_defaults(&c);
	/* A lone bound, or swapped bounds: vsftpd's readings (config_pasv_range). */
	c.pasv_min_port = 40000;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	c.pasv_min_port = 40010;
	c.pasv_max_port = 40000;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	c.pasv_min_port = 40000;
	c.pasv_max_port = 40000;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	c.pasv_max_port = 40100;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);

	config_init_defaults(&c);
	c.listen = 1;
	c.listen_ipv6 = 1;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	c.listen = 0;
	c.listen_ipv6 = 0;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);

	strcpy(c.listen_address, "127.0.0.1");
	strcpy(c.listen_address6, "::1");
	strcpy(c.pasv_address, "192.0.2.7");
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	strcpy(c.listen_address, "localhost");
	CHECK_FAILS(&c, "option 'listen_address': 'localhost' is not a numeric IPv4 address");
	strcpy(c.listen_address6, "127.0.0.1");
	CHECK_FAILS(&c, "option 'listen_address6'");
	strcpy(c.pasv_address, "::1");
	CHECK_FAILS(&c, "option 'pasv_address'");

	strcpy(c.secure_chroot_dir, "/");
	CHECK_FAILS(&c, "secure_chroot_dir");
	strcpy(c.secure_chroot_dir, "empty");
	CHECK_FAILS(&c, "option 'secure_chroot_dir' must be an absolute path");
	c.secure_chroot_dir[0] = '\0';
	CHECK_FAILS(&c, "option 'secure_chroot_dir' must be set");
	strcpy(c.nopriv_user, "root");
	CHECK_FAILS(&c, "nopriv_user");
	c.nopriv_user[0] = '\0';
	CHECK_FAILS(&c, "nopriv_user");

	strcpy(c.anon_root, "srv/ftp");
	CHECK_FAILS(&c, "option 'anon_root' must be an absolute path");
	c.chroot_list_enable = 1;
	c.chroot_list_file[0] = '\0';
	CHECK_FAILS(&c, "option 'chroot_list_file' must be set");
	c.chroot_list_file[0] = '\0';
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	c.userlist_enable = 1;
	strcpy(c.userlist_file, "user_list");
	CHECK_FAILS(&c, "option 'userlist_file' must be an absolute path");
	c.log_file[0] = '\0';
	CHECK_FAILS(&c, "option 'log_file' must be set");
	c.log_file[0] = '\0';
	c.syslog_enable = 1;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);

	config_init_defaults(&c);
	c.anonymous_enable = 1;
	c.ftp_username[0] = '\0';
	CHECK_FAILS(&c, "ftp_username");
	/* A path is its last part to PAM (startcheck_vsftpd_files says so);
	 * one without a last part names no service. */
	c.local_enable = 1;
	strcpy(c.pam_service_name, "../evil");
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	strcpy(c.pam_service_name, "/etc/pam.d/");
	CHECK_FAILS(&c, "pam_service_name");
	c.local_enable = 0;
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
}

/* config_print into a string (caller frees). */
static char *
print_to_string(const struct tw_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		exit(1);
	CHECK_INT(config_print(c, f), 0);
	fclose(f);
	return buf;
}

static void
check_round_trip(const struct tw_config *c, int line)
{
	struct tw_config back;
	char path[256], err[512], *text, *again;
	size_t i;

	text = print_to_string(c);
	if (load(&back, text, strlen(text), path, sizeof(path), err, sizeof(err)) != 0) {
		check_failed++;
		fprintf(stderr, "%s:%d: printed config does not load: %s\n",
		    __FILE__, line, err);
		free(text);
		return;
	}
	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];
		struct tw_config *orig = (struct tw_config *)(void *)c;

		if (d->type == CFG_T_STR)
			CHECK_STR((char *)field_of(&back, d), (char *)field_of(orig, d));
		else
			CHECK_INT(num_of(&back, d), num_of(orig, d));
	}
	again = print_to_string(&back);
	CHECK_STR(again, text);
	free(again);
	free(text);
}

static void
test_print(void)
{
	struct tw_config c;
	char *text;
	size_t i, lines = 0;

	config_init_defaults(&c);
	text = print_to_string(&c);
	CHECK(strncmp(text, "listen=YES\nlisten_ipv6=NO\n", 26) == 0);
	CHECK(strstr(text, "\nlisten_port=21\n") != NULL);
	CHECK(strstr(text, "\nlocal_umask=0077\n") != NULL);
	CHECK(strstr(text, "\nfile_open_mode=0666\n") != NULL);
	CHECK(strstr(text, "\nlisten_address=\n") != NULL);
	CHECK(strstr(text, "\nnopriv_user=nobody\n") != NULL);
	for (i = 0; text[i] != '\0'; i++)
		lines += text[i] == '\n';
	CHECK_INT(lines, cfg_table_len);
	free(text);
	check_round_trip(&c, __LINE__);

	/* Every option away from its default. */
	for (i = 0; i < cfg_table_len; i++) {
		const struct cfg_desc *d = &cfg_table[i];

		switch (d->type) {
		case CFG_T_BOOL:
			*(int *)field_of(&c, d) = !d->def_num;
			break;
		case CFG_T_UINT:
		case CFG_T_OCTAL:
			*(unsigned int *)field_of(&c, d) =
			    (unsigned int)(d->def_num == d->max ? d->min : d->max);
			break;
		case CFG_T_STR:
			snprintf(field_of(&c, d), CONFIG_MAX_STR, "/x/%s = y#", d->name);
			break;
		}
	}
	check_round_trip(&c, __LINE__);
	c.local_umask = 0;
	c.file_open_mode = 07;
	c.ftpd_banner[0] = '\0';
	check_round_trip(&c, __LINE__);
}

static void
test_print_man(void)
{
	char *buf = NULL, *line, *save = NULL, *p;
	size_t len = 0, tp = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	CHECK_INT(config_print_man(f), 0);
	fclose(f);
	CHECK(strncmp(buf, ".TP\n.B listen\n", 14) == 0);
	CHECK(strstr(buf, "\n.B listen_port\n") != NULL);
	CHECK(strstr(buf, "\nDefault: \\fB21\\fR (from 1 to 65535)\n") != NULL);
	CHECK(strstr(buf, "\nDefault: \\fB0077\\fR (octal, at most 0777)\n") != NULL);
	CHECK(strstr(buf, "\nDefault: \\fB/var/log/twinftpd.log\\fR\n") != NULL);
	CHECK(strstr(buf, "\nDefault: \\fBYES\\fR\n") != NULL);
	CHECK(strstr(buf, "\nDefault: (none)\n") != NULL);
	/* Every backslash starts an escape config_print_man means to write. */
	for (p = buf; (p = strchr(p, '\\')) != NULL; p += 2)
		CHECK(p[1] == 'f' || p[1] == 'e' || p[1] == '&');
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		/* The page's source reads in an 80-column terminal. */
		if (strlen(line) >= 80)
			fprintf(stderr, "man line of %zu columns: %s\n",
			    strlen(line), line);
		CHECK(strlen(line) < 80);
		if (line[0] == '.' || line[0] == '\'') {
			/* Only the requests config_print_man means to write. */
			CHECK(strcmp(line, ".TP") == 0 || strcmp(line, ".IP") == 0 ||
			    strncmp(line, ".B ", 3) == 0);
			tp += strcmp(line, ".TP") == 0;
		}
	}
	CHECK_INT(tp, cfg_table_len);
	free(buf);
}

/*
 * A write error must reach the caller, or `twinftpd -t > full-disk`
 * prints half the settings and says the config is fine.
 */
static void
test_print_write_error(void)
{
	struct tw_config c;
	FILE *f;

	config_init_defaults(&c);
	if ((f = fopen("/dev/full", "w")) == NULL) {
		printf("skipping the write error test: no /dev/full\n");
		return;
	}
	CHECK_INT(config_print(&c, f), -1);
	fclose(f);
	CHECK((f = fopen("/dev/full", "w")) != NULL);
	if (f == NULL)
		return;
	CHECK_INT(config_print_man(f), -1);
	fclose(f);
}

/*
 * The shipped example config must load and pass the checks. It is found
 * next to this source file; skipped when the tree is not at hand.
 */
static void
test_example_config(void)
{
	char path[4096], err[512];
	struct tw_config c;
	const char *slash;

	slash = strrchr(__FILE__, '/');
	if (slash == NULL ||
	    tw_snprintf(path, sizeof(path), "%.*s/../../etc/twinftpd.conf",
		(int)(slash - __FILE__), __FILE__) == -1 ||
	    access(path, R_OK) != 0) {
		printf("skipping the example config: not found next to %s\n", __FILE__);
		return;
	}
	config_init_defaults(&c);
	if (config_load_file(&c, path, err, sizeof(err)) != 0)
		fprintf(stderr, "%s\n", err);
	CHECK_INT(config_load_file(&c, path, err, sizeof(err)), 0);
	CHECK_INT(config_check(&c, err, sizeof(err)), 0);
	CHECK_INT(c.listen, 1);
	CHECK_INT(c.anonymous_enable, 0);
	CHECK_INT(c.local_enable, 1);
	CHECK_INT(c.write_enable, 0);
}

/* One run names every bad line, reads on past a long or NUL line, notes too. */
static void
test_all_problems(void)
{
	static const char text[] =
	    "listen=maybe\n"			/* 1 */
	    "nosuch=1\n"			/* 2 */
	    "async_abor_enable=YES\n"		/* 3: note */
	    "listen_port=99999\n"		/* 4 */
	    "listen=N\0O\n"			/* 5: NUL */
	    "max_per_ip=7\n"			/* 6: good, after the NUL line */
	    "pasv_min_port=3000\n";
	struct tw_config c;
	char path[512];

	snprintf(path, sizeof(path), "%s/all.conf", tmpdir);
	write_file(path, text, sizeof(text) - 1);
	config_init_defaults(&c);
	reported[0] = '\0';
	CHECK_INT(config_load_file_all(&c, path, collect, NULL), 4);
	CHECK(strstr(reported, ":1: option 'listen'") != NULL);
	CHECK(strstr(reported, ":2: unknown option 'nosuch'") != NULL);
	CHECK(strstr(reported, "N:") != NULL && strstr(reported, ":3: vsftpd option") != NULL);
	CHECK(strstr(reported, ":4: option 'listen_port'") != NULL);
	CHECK(strstr(reported, ":5: NUL byte") != NULL);
	CHECK_INT(c.max_per_ip, 7);
	unlink(path);

	/* The cross-option checks, each of them. */
	reported[0] = '\0';
	c.pasv_min_port = 3000;
	c.pasv_max_port = 2000;
	snprintf(c.nopriv_user, sizeof(c.nopriv_user), "root");
	snprintf(c.anon_root, sizeof(c.anon_root), "relative");
	CHECK_INT(config_check_all(&c, collect, NULL), 2);
	CHECK(strstr(reported, "pasv_min_port") == NULL);	/* a warning below */
	CHECK(strstr(reported, "nopriv_user") != NULL);
	CHECK(strstr(reported, "anon_root' must be an absolute path") != NULL);

	/* Who may log in left to the defaults (vsftpd's): said. */
	config_init_defaults(&c);
	warned[0] = '\0';
	config_warnings(&c, collect_warning);
	CHECK(strstr(warned, "anonymous_enable is not set: anonymous logins are allowed") != NULL);
	CHECK(strstr(warned, "local_enable is not set: local users cannot log in") != NULL);
	CHECK_INT(config_apply_line_all(&c, "anonymous_enable=NO", "t.conf", 1, collect, NULL), 0);
	CHECK_INT(config_apply_line_all(&c, "local_enable=NO", "t.conf", 2, collect, NULL), 0);
	warned[0] = '\0';
	config_warnings(&c, collect_warning);
	CHECK_STR(warned, "");

	/* pasv_addr_resolve with no name to resolve: a warning, as vsftpd starts. */
	config_init_defaults(&c);
	c.anonymous_enable_written = c.local_enable_written = 1;
	c.pasv_addr_resolve = 1;
	reported[0] = '\0';
	CHECK_INT(config_check_all(&c, collect, NULL), 0);
	warned[0] = '\0';
	config_warnings(&c, collect_warning);
	CHECK(strstr(warned, "pasv_addr_resolve=YES without pasv_address") != NULL);
	snprintf(c.pasv_address, sizeof(c.pasv_address), "ftp.example.org");
	warned[0] = '\0';
	config_warnings(&c, collect_warning);
	CHECK_STR(warned, "");
	CHECK_PASV_RANGE(0, 0, 0, 0, NULL);
	CHECK_PASV_RANGE(30000, 30010, 30000, 30010, NULL);
	/* vsftpd's readings: a bound left at 0, bounds the wrong way round. */
	CHECK_PASV_RANGE(30000, 0, 30000, 65535, "PASV uses ports 30000 to 65535");
	CHECK_PASV_RANGE(0, 30010, 1024, 30010, "PASV uses ports 1024 to 30010");
	CHECK_PASV_RANGE(0, 1000, 1024, 65535, "PASV uses ports 1024 to 65535");
	CHECK_PASV_RANGE(1000, 1010, 1024, 65535, "PASV uses ports 1024 to 65535");
	CHECK_PASV_RANGE(30000, 70000, 30000, 65535, "PASV uses ports 30000 to 65535");
	/* twinftpd's own reading: the range between bounds set the wrong way. */
	CHECK_PASV_RANGE(21010, 21000, 21000, 21010, "PASV uses ports 21000 to 21010");
}

/*
 * A per-user file (user_config_dir): per-session options are applied,
 * the others skipped with a note, an error counted; the file must be
 * root's and not writable by others.
 */
static void
test_user_file(void)
{
	static const char text[] =
	    "write_enable=NO\n"
	    "local_root=/srv/ftp/alice\n"
	    "listen_port=2121\n"
	    "pam_service_name=other\n"
	    "local_max_rate=1000\n"
	    "tcp_wrappers=NO\n";
	struct tw_config c;
	char path[512];

	snprintf(path, sizeof(path), "%s/alice", tmpdir);
	write_file(path, text, sizeof(text) - 1);
	CHECK_INT(chmod(path, 0644), 0);
	config_init_defaults(&c);
	c.write_enable = 1;
	reported[0] = '\0';
	if (geteuid() == 0) {
		CHECK_INT(config_load_user_file_all(&c, path, collect, NULL), 0);
		CHECK_INT(c.write_enable, 0);
		CHECK_STR(c.local_root, "/srv/ftp/alice");
		CHECK_INT((int)c.local_max_rate, 1000);
		/* Not per session: untouched, each named in a note. */
		CHECK_INT((int)c.listen_port, 21);
		CHECK_STR(c.pam_service_name, "twinftpd");
		CHECK(strstr(reported, "N:") != NULL &&
		      strstr(reported, ":3: option 'listen_port' ignored") != NULL);
		CHECK(strstr(reported, ":4: option 'pam_service_name' ignored") != NULL);
		CHECK(strstr(reported, "E:") == NULL);
		/* Writable by others: refused whole. */
		CHECK_INT(chmod(path, 0646), 0);
		config_init_defaults(&c);
		reported[0] = '\0';
		CHECK_INT(config_load_user_file_all(&c, path, collect, NULL), 1);
		CHECK(strstr(reported, "writable by others") != NULL);
		CHECK_INT(c.write_enable, 0);
		CHECK_STR(c.local_root, "");
		/* An unknown option is an error, as in the main file. */
		write_file(path, "write_enable=YES\nwrite_enabel=NO\n", 33);
		CHECK_INT(chmod(path, 0600), 0);
		reported[0] = '\0';
		CHECK_INT(config_load_user_file_all(&c, path, collect, NULL), 1);
		CHECK(strstr(reported, ":2: unknown option 'write_enabel'") != NULL);
	} else {
		/* Not root's: refused whole, nothing applied. */
		CHECK_INT(config_load_user_file_all(&c, path, collect, NULL), 1);
		CHECK(strstr(reported, "not owned by root") != NULL);
		CHECK_INT(c.write_enable, 1);
	}
	unlink(path);
	CHECK(config_is_per_session("write_enable"));
	CHECK(config_is_per_session("local_root"));
	CHECK(!config_is_per_session("listen"));
	CHECK(!config_is_per_session("user_config_dir"));
	CHECK(!config_is_per_session("guest_enable"));
	CHECK(!config_is_per_session("chown_uploads"));
	CHECK(!config_is_per_session("no_such_option"));
	/* The record a spare gets is checked field by field. */
	config_init_defaults(&c);
	CHECK_INT(config_record_check(&c), 0);
	c.write_enable = 2;
	CHECK_INT(config_record_check(&c), -1);
	config_init_defaults(&c);
	c.local_umask = 01000;
	CHECK_INT(config_record_check(&c), -1);
	config_init_defaults(&c);
	memset(c.local_root, 'x', sizeof(c.local_root));
	CHECK_INT(config_record_check(&c), -1);
}

int
main(void)
{
	strcpy(tmpdir, "/tmp/test_config.XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_table();
	test_bool();
	test_uint();
	test_octal();
	test_string();
	test_names();
	test_file();
	test_all_problems();
	test_user_file();
	test_check();
	test_print();
	test_print_man();
	test_print_write_error();
	test_example_config();
	if (rmdir(tmpdir) != 0)
		fprintf(stderr, "rmdir %s: %s\n", tmpdir, strerror(errno));
	return check_summary();
}
