/*
 * Everything the listener derives from the configuration before it forks
 * a session: the users it resolves (tw_rt), the PAM modules it preloads,
 * login_nice in effect. Built at start and again at every reload
 * (SIGHUP), so this is the one place a new derived fact goes (the FTPS
 * engineer's TLS context, once the listener loads one, belongs here).
 * What can only be done once (binding, namespaces, compiling the seccomp
 * policies, the listener's own filter) stays in main.c.
 */
#ifndef TW_DERIVED_H
#define TW_DERIVED_H

#include <stddef.h>

struct tw_config;

/*
 * Derives from cfg and, only when all of it succeeded, makes it the
 * state new sessions inherit. 0, or -1 with the reason in err, and the
 * state sessions inherit is unchanged (a reload is then refused whole).
 */
int derived_build(const struct tw_config *cfg, char *err, size_t errlen);

#endif
