/*
 * Monotonic time for deadlines and rate windows: a wall-clock step (NTP,
 * an operator setting the date) must neither stretch a ban or a pause nor
 * cut it short.
 */
#ifndef TW_MONOTIME_H
#define TW_MONOTIME_H

#include <errno.h>
#include <string.h>
#include <time.h>

#include "src/common/util.h"

/* Milliseconds on CLOCK_MONOTONIC (since an unspecified start, boot on Linux). */
static inline long long
tw_mono_ms(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		die("clock_gettime(CLOCK_MONOTONIC): %s", strerror(errno));
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Whole seconds on the same clock. */
static inline time_t
tw_mono_sec(void)
{
	return (time_t)(tw_mono_ms() / 1000);
}

#endif
