/*
 * A session monitor's exit code, as the listener decodes it when it
 * reaps the monitor: the session's failed logins and whether it ended
 * badly survive the one byte, whatever the verdict, and what is no such
 * code (die()'s 1 and 2, the listener's SIGTERM) counts for nothing.
 */
#include "check.h"

#include <signal.h>
#include <sys/wait.h>

#include "privsep/monitor.h"
#include "src/common/config.h"

/* max_login_fails' bound in config_table.h. */
#define FAILS_BOUND 100

static struct monitor_outcome
roundtrip(unsigned fails, int verdict)
{
	struct tw_config cfg;
	struct monitor mon;
	int code;

	memset(&cfg, 0, sizeof(cfg));
	monitor_init(&mon, &cfg);
	mon.login_fails = fails;
	code = monitor_exit_code(&mon, verdict);
	CHECK(code >= 0 && code <= 255);
	return monitor_outcome_of(W_EXITCODE(code, 0));
}

static void
test_roundtrip(void)
{
	unsigned n;

	for (n = 0; n <= FAILS_BOUND; n++) {
		struct monitor_outcome ok = roundtrip(n, MONITOR_EXIT_OK);
		struct monitor_outcome closed = roundtrip(n, MONITOR_EXIT_LOGIN_FAILED);
		struct monitor_outcome crash = roundtrip(n, MONITOR_EXIT_CRASH);

		CHECK_INT(ok.failed_logins, n);
		CHECK_INT(ok.bad, 0);
		CHECK_INT(closed.failed_logins, n);
		CHECK_INT(closed.bad, 1);
		CHECK_INT(crash.failed_logins, n);
		CHECK_INT(crash.bad, 1);
	}
	/* Never more than the bound, never wrapped into another range. */
	CHECK_INT(roundtrip(FAILS_BOUND + 50, MONITOR_EXIT_OK).failed_logins, FAILS_BOUND);
	CHECK_INT(roundtrip(FAILS_BOUND + 50, MONITOR_EXIT_OK).bad, 0);
	CHECK_INT(roundtrip(FAILS_BOUND + 50, MONITOR_EXIT_CRASH).failed_logins, FAILS_BOUND);
}

static void
test_other_statuses(void)
{
	int code;

	/* A clean end with no failure is exit code 0. */
	{
		struct tw_config cfg;
		struct monitor mon;

		memset(&cfg, 0, sizeof(cfg));
		monitor_init(&mon, &cfg);
		CHECK_INT(monitor_exit_code(&mon, MONITOR_EXIT_OK), 0);
	}
	/* die(): the environment or a bug, not the client's doing. */
	for (code = 0; code <= 2; code++) {
		struct monitor_outcome o = monitor_outcome_of(W_EXITCODE(code, 0));

		CHECK_INT(o.failed_logins, 0);
		CHECK_INT(o.bad, 0);
	}
	CHECK_INT(monitor_outcome_of(W_EXITCODE(0, SIGTERM)).bad, 0);
	CHECK_INT(monitor_outcome_of(W_EXITCODE(0, SIGKILL)).bad, 1);
	CHECK_INT(monitor_outcome_of(W_EXITCODE(0, SIGSYS)).bad, 1);
	CHECK_INT(monitor_outcome_of(W_EXITCODE(0, SIGSEGV)).failed_logins, 0);
}

int
main(void)
{
	test_roundtrip();
	test_other_statuses();
	return check_summary();
}
