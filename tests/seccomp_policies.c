/*
 * Test builds: prints what each role's seccomp filter allows under a
 * config file (sandbox_policy_print), for the recorder test
 * (tests/e2e/test_seccomp_usage.py), which compares it with the calls a
 * run of sessions made.
 *
 *   seccomp_policies CONFIG [isolated]
 *
 * "isolated": the workers live in the empty network namespace (the
 * daemon's log says whether it could make one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"
#include "src/common/config.h"

int
main(int argc, char **argv)
{
	static struct tw_config cfg;
	char err[CONFIG_MAX_MSG];

	if (argc < 2) {
		fprintf(stderr, "usage: %s CONFIG [isolated]\n", argv[0]);
		return 2;
	}
	config_init_defaults(&cfg);
	if (config_load_file(&cfg, argv[1], err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	sandbox_worker_no_net = argc > 2 && strcmp(argv[2], "isolated") == 0;
	sandbox_policy_print(stdout, &cfg);
	return 0;
}
