/*
 * Everything the listener derives from the configuration before it forks
 * a session: the users it resolves (tw_rt), login_nice in effect, the
 * FTPS context (certificate and key), the PAM modules it preloads. Built
 * at start and again at every reload (SIGHUP): this is the one place a
 * new derived fact goes. What can only be done once (binding, namespaces,
 * compiling the seccomp policies, the listener's own filter) stays in
 * main.c.
 */
#ifndef TW_DERIVED_H
#define TW_DERIVED_H

#include <stddef.h>

struct tw_config;

/*
 * Derives from cfg and, only when all of it succeeded, makes it the
 * state new sessions inherit. 0, or -1 with the reason in err, and the
 * state sessions inherit is unchanged (a reload is then refused whole).
 * cfg must be the configuration the listener forks with (tls.c keeps a
 * pointer to it). reloading: also reload what main.c built at start
 * before -t could report (the FTPS context).
 */
int derived_build(const struct tw_config *cfg, int reloading, char *err, size_t errlen);

#endif
