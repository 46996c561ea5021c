/*
 * Configuration: vsftpd's `name=value` format, driven by config_table.h.
 */
#ifndef TW_CONFIG_H
#define TW_CONFIG_H

#include <stdio.h>
#include <stddef.h>

#define CONFIG_MAX_LINE 4096	/* longest accepted line, in bytes */
#define CONFIG_MAX_STR 1024	/* longest string value */
#define CONFIG_MAX_MSG (CONFIG_MAX_LINE + 256)	/* one error or note, path included */

struct tw_config {
#define CFG_BOOL(n, def, doc) int n;
#define CFG_UINT(n, def, mn, mx, doc) unsigned int n;
#define CFG_OCTAL(n, def, mx, doc) unsigned int n;
#define CFG_STR(n, def, doc) char n[CONFIG_MAX_STR];
#include "src/common/config_table.h"
#undef CFG_BOOL
#undef CFG_UINT
#undef CFG_OCTAL
#undef CFG_STR
	/* Who may log in was written down (not in the table: no option). A
	 * config that leaves it to the defaults, vsftpd's, gets a warning,
	 * since twinftpd's defaults were the other way round before. */
	int anonymous_enable_written, local_enable_written;
};

enum cfg_type { CFG_T_BOOL, CFG_T_UINT, CFG_T_OCTAL, CFG_T_STR };

struct cfg_desc {
	const char *name;
	enum cfg_type type;
	size_t offset;		/* into struct tw_config */
	unsigned long long def_num;
	const char *def_str;
	unsigned long long min, max;
	const char *doc;
};

/* The table, in config_table.h order, and its length. */
extern const struct cfg_desc cfg_table[];
extern const size_t cfg_table_len;

/*
 * How the checks that find every problem of a config (-t) hand them out:
 * one call per problem, msg naming file, line and option as the err of
 * the functions below does. A CFG_NOTE is no problem: a vsftpd option
 * that was accepted although it changes nothing here, and why.
 */
enum cfg_severity { CFG_ERROR, CFG_NOTE };
typedef void (*cfg_report_fn)(void *ctx, enum cfg_severity sev, const char *msg);

/*
 * Checks a struct tw_config that came over a socket from another root
 * process of the session (a login's per-user options, handed to the
 * spare): every value within its table bounds, every string terminated.
 * 0 when sound, -1 otherwise.
 */
int config_record_check(const struct tw_config *c);

/* Fills every option with its default. */
void config_init_defaults(struct tw_config *c);

/*
 * Applies one `name=value` setting. `origin` and `line` name where it came
 * from for the error message ("/etc/twinftpd.conf:12: ..." or "-o: ...").
 * Returns 0, or -1 with a message in err naming origin, line and option.
 */
int config_apply_line(struct tw_config *c, const char *text, const char *origin,
		      unsigned line, char *err, size_t errlen);

/*
 * Reads a config file: blank lines and lines starting with '#' are skipped,
 * leading whitespace is not allowed before a name (as in vsftpd), a line
 * longer than CONFIG_MAX_LINE is an error. Returns 0 or -1 with err set.
 */
int config_load_file(struct tw_config *c, const char *path, char *err, size_t errlen);
/*
 * The same, but reads on past a bad line and reports every problem and
 * note. Returns the number of errors reported (0: the file is good).
 */
unsigned config_load_file_all(struct tw_config *c, const char *path,
			      cfg_report_fn report, void *ctx);
/*
 * A per-user file (user_config_dir) over c: as config_load_file_all(),
 * but the file must be owned by root and not writable by others, and a
 * line naming an option that is not per-session (config_is_per_session)
 * is skipped with a CFG_NOTE. Returns the number of errors reported.
 */
unsigned config_load_user_file_all(struct tw_config *c, const char *path,
				   cfg_report_fn report, void *ctx);
/* Whether a per-user file may set option name (or an alias of it). */
int config_is_per_session(const char *name);
/* config_apply_line() that also reports notes; 0 or 1 error reported. */
unsigned config_apply_line_all(struct tw_config *c, const char *text, const char *origin,
			       unsigned line, cfg_report_fn report, void *ctx);

/* Cross-option checks (pasv_min_port <= pasv_max_port, ...). 0 or -1. */
int config_check(const struct tw_config *c, char *err, size_t errlen);
/* Every cross-option check; returns the number of errors reported. */
unsigned config_check_all(const struct tw_config *c, cfg_report_fn report, void *ctx);
/*
 * The forced-TLS login rules (vsftpd's force_*_logins_ssl, allow_anon_ssl):
 * NULL when a login over (tls) or without TLS may go on, else vsftpd's
 * 530 text. The worker answers with it at USER; the monitor, which does
 * not trust the worker, checks it again at the login.
 */
const char *config_tls_login_refusal(const struct tw_config *c, int tls, int anonymous);
/*
 * Whether a connection to local_port starts with a TLS handshake
 * (implicit_ssl, or implicit_ssl_port): then nothing but TLS may be
 * written to it, not even a plaintext 421.
 */
int config_implicit_tls(const struct tw_config *c, unsigned local_port);
/* Calls warn for each setting that is accepted but changes nothing here. */
void config_warnings(const struct tw_config *c, void (*warn)(const char *msg));

/*
 * The passive port range pasv_min_port and pasv_max_port mean, both 0 for
 * any port: a bound left at 0 is vsftpd's (1024, 65535), and bounds set
 * the wrong way round still bound the range, as in vsftpd.
 */
void config_pasv_range(const struct tw_config *c, unsigned *lo, unsigned *hi);

/*
 * Whether pasv_address is a host name the listener resolves: with
 * pasv_addr_resolve, or (vsftpd would refuse PASV) a name written there
 * without it.
 */
int config_pasv_is_name(const struct tw_config *c);

/*
 * Prints the effective settings, one `name=value` a line, table order,
 * and flushes out. 0, or -1 when out reported a write error.
 */
int config_print(const struct tw_config *c, FILE *out);

/*
 * Prints the OPTIONS section of twinftpd.conf(5) in man(7) markup, every
 * line shorter than 80 columns, and flushes out. 0, or -1 on a write error.
 */
int config_print_man(FILE *out);

#endif
