/*
 * In the TLS module (src/tls.h): what its code (and the headers' inline
 * functions) call of the daemon's, reaching the daemon's own through the
 * callbacks it binds before any other call. die() and bug() are
 * src/common/util.c's, linked into the module, with their hook set to
 * the host's; tw_log() passes its text on. Hidden, as all the module's
 * names but its table: the daemon exports nothing.
 */
#include "src/tls.h"

#include <stdarg.h>
#include <stdio.h>

#include "src/common/log.h"
#include "src/common/util.h"

static const struct tls_host *host;

static void
host_die(int is_bug, const char *msg)
{
	host->fatal(is_bug, msg);
}

void
tls_host_bind(const struct tls_host *h)
{
	host = h;
	util_set_die_hook(host_die);
}

void
tw_log(int level, const char *fmt, ...)
{
	char text[TW_LOG_MAX_TEXT];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (host != NULL)
		host->log(level, text);
}
