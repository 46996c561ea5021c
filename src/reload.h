/*
 * Reading the configuration as the command line names it, at start and
 * again on SIGHUP, when the listener reloads it.
 */
#ifndef TW_RELOAD_H
#define TW_RELOAD_H

#include <stddef.h>

struct tw_config;

/* What the command line names: the file and the -o overrides. */
struct config_source {
	const char *path;
	int explicit_path;	/* a missing default file means built-in defaults */
	const char *const *overrides;
	size_t noverrides;
};

/*
 * Defaults, then the file, then each -o, then the cross-option checks:
 * 0, or -1 with the first error in err (naming the file and line, or -o
 * and its position). cfg is overwritten either way.
 */
int config_source_read(struct tw_config *cfg, const struct config_source *src,
		       char *err, size_t errlen);

/* Remembers src (which must outlive the listener) for listener_reload(). */
void reload_set_source(const struct config_source *src);

/*
 * SIGHUP in the listener: reads the configuration again. A configuration
 * with an error, or whose derived state (users, secure_chroot_dir,
 * the FTPS certificate and key) cannot be built, is refused whole and *live is left as it was.
 * Otherwise *live becomes the new one, except the settings that only a
 * restart can change (named in the log, keeping their old values); the
 * log is reopened and the ready pool replaced. Sessions already running
 * keep the settings they were forked with.
 */
void listener_reload(struct tw_config *live);

/* Reloads that took effect since the start (0: the settings read at start). */
unsigned long reload_generation(void);

/* The configuration file the command line names. */
const char *reload_config_path(void);

#endif
