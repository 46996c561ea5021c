/*
 * Fuzz target for the config parser: every '\n'-separated piece of the
 * input is one config_apply_line() call. Beyond "never crashes", it checks
 * one property: whatever config results, config_print's output parses
 * back to a config that prints the same (so `twinftpd -t` output is
 * always a valid config).
 */
#include "src/common/config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
print_config(const struct tw_config *c, size_t *lenp)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, lenp);

	if (f == NULL)
		abort();
	config_print(c, f);
	if (fclose(f) != 0)
		abort();
	return buf;
}

static void
check_round_trip(const struct tw_config *c)
{
	struct tw_config back;
	char err[512], *text, *again, *line, *save = NULL;
	size_t len, len2;

	text = print_config(c, &len);
	config_init_defaults(&back);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (config_apply_line(&back, line, "print", 1, err, sizeof(err)) != 0) {
			fprintf(stderr, "printed line does not parse: %s\n", err);
			abort();
		}
	}
	free(text);
	text = print_config(c, &len);
	again = print_config(&back, &len2);
	if (len != len2 || memcmp(text, again, len) != 0) {
		fprintf(stderr, "config_print round trip differs\n");
		abort();
	}
	free(again);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tw_config c;
	char err[512];
	size_t start = 0, i;
	unsigned lineno = 0;

	err[0] = '\0';
	config_init_defaults(&c);
	for (i = 0; i <= size; i++) {
		char *line;

		if (i < size && data[i] != '\n')
			continue;
		/* A private, exactly-sized copy so ASan sees any overread. */
		if ((line = malloc(i - start + 1)) == NULL)
			abort();
		memcpy(line, data + start, i - start);
		line[i - start] = '\0';
		lineno++;
		(void)config_apply_line(&c, line, "fuzz", lineno, err, sizeof(err));
		if (memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		free(line);
		start = i + 1;
	}
	(void)config_check(&c, err, sizeof(err));
	check_round_trip(&c);
	return 0;
}
