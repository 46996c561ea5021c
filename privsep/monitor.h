/*
 * The session monitor: one root process per client. It never reads the
 * client's bytes; it answers typed IPC requests of its protocol worker,
 * each checked against the session's state (the permit table).
 */
#ifndef TW_MONITOR_H
#define TW_MONITOR_H

#include <sys/types.h>

#include "src/common/runtime.h"

struct tw_config;


/*
 * How a session monitor exits: the listener reads it when it reaps the
 * monitor, and penalises a source whose sessions keep ending badly.
 */
enum monitor_exit {
	MONITOR_EXIT_OK = 0,
	MONITOR_EXIT_LOGIN_FAILED = 3,	/* closed after max_login_fails */
	MONITOR_EXIT_CRASH = 4,		/* worker crashed or broke the IPC rules */
};

#endif
