#include "src/reload.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/log.h"
#include "src/common/sdnotify.h"
#include "src/common/util.h"
#include "src/derived.h"
#include "src/pool.h"
#include "src/session_table.h"
#include "src/startcheck.h"
#include "sandbox/sandbox.h"

/*
 * Settings a reload cannot change: the sockets are bound (and the
 * listener may no longer bind port 21), the listener runs under its
 * filter and in its namespaces, and it has left or kept its terminal.
 */
static const char *const restart_only[] = {
	"listen", "listen_ipv6", "listen_address", "listen_address6", "listen_port",
	"implicit_ssl_port", "background", "seccomp_sandbox", "seccomp_log_only",
	"isolate_network", "isolate", "status_socket",
};

static const struct config_source *source;
/* Reloads that took effect: the configuration's generation (twinftpd -S). */
static unsigned long generation;

int
config_source_read(struct tw_config *cfg, const struct config_source *src, char *err,
		   size_t errlen)
{
	char check[CONFIG_MAX_LINE + 256];
	size_t i;

	config_init_defaults(cfg);
	if (src->explicit_path || access(src->path, F_OK) == 0) {
		if (config_load_file(cfg, src->path, err, errlen) != 0)
			return -1;
	}
	for (i = 0; i < src->noverrides; i++)
		if (config_apply_line(cfg, src->overrides[i], "-o", (unsigned)(i + 1), err,
				      errlen) != 0)
			return -1;
	if (config_check(cfg, check, sizeof(check)) != 0) {
		(void)snprintf(err, errlen, "%s: %s", src->path, check);
		return -1;
	}
	return 0;
}

void
reload_set_source(const struct config_source *src)
{
	source = src;
}

static const struct cfg_desc *
find_option(const char *name)
{
	size_t i;

	for (i = 0; i < cfg_table_len; i++)
		if (strcmp(cfg_table[i].name, name) == 0)
			return &cfg_table[i];
	return NULL;
}

/* The new value of each restart_only option that differs is put back. */
static void
keep_restart_only(struct tw_config *next, const struct tw_config *live)
{
	size_t i;

	for (i = 0; i < TW_ARRAY_LEN(restart_only); i++) {
		const struct cfg_desc *d = find_option(restart_only[i]);
		char *to;
		const char *from;
		size_t size;

		/* An option of another branch's table not merged here yet. */
		if (d == NULL)
			continue;
		to = (char *)next + d->offset;
		from = (const char *)live + d->offset;
		size = d->type == CFG_T_STR ? CONFIG_MAX_STR : sizeof(unsigned int);
		if (d->type == CFG_T_STR ? strcmp(to, from) == 0 : memcmp(to, from, size) == 0)
			continue;
		memcpy(to, from, size);
		tw_log(TW_LOG_WARN, "reload: %s cannot change without a restart; "
		       "the running value stays", d->name);
	}
}

static void
warn_log(const char *msg)
{
	tw_log(TW_LOG_WARN, "reload: %s", msg);
}

void
listener_reload(struct tw_config *live)
{
	/* Large (every string option inline); the listener is one thread. */
	static struct tw_config next, old;
	char err[CONFIG_MAX_LINE + 512];

	sdnotify_reloading();
	if (config_source_read(&next, source, err, sizeof(err)) != 0) {
		tw_log(TW_LOG_ERR, "reload refused, the settings in force stay: %s", err);
		sdnotify("READY=1\nSTATUS=reload refused: configuration error");
		return;
	}
	sandbox_settle(&next, NULL);
	keep_restart_only(&next, live);
	startcheck_vsftpd_files(&next, warn_log);
	/* Derived from the live copy (tls.c keeps a pointer to it), put back if refused. */
	old = *live;
	*live = next;
	if (derived_build(live, 1, err, sizeof(err)) != 0) {
		*live = old;
		tw_log(TW_LOG_ERR, "reload refused, the settings in force stay: %s", err);
		sdnotify("READY=1\nSTATUS=reload refused: configuration error");
		return;
	}
	config_warnings(live, warn_log);
	/* Logged to the old file first: its last line says where the log went. */
	tw_log(TW_LOG_INFO, "reload: %s read; reopening the log", source->path);
	if (log_reopen(live, err, sizeof(err)) != 0)
		tw_log(TW_LOG_ERR, "reload: %s; logging on where it was", err);
	pool_reload(live);
	generation++;
	tw_log(TW_LOG_INFO, "reload done: new sessions get the new settings, %zu sessions "
	       "in progress keep theirs, the ready pool is being replaced", sessions_count());
	sdnotify("READY=1\nSTATUS=configuration reloaded");
}

unsigned long
reload_generation(void)
{
	return generation;
}

const char *
reload_config_path(void)
{
	return source != NULL ? source->path : "";
}
