/*
 * What bench/rawlimit and bench/rawsess share: the raw harnesses that
 * bench/compare puts beside the servers' figures.
 */
#ifndef RAW_H
#define RAW_H

/* Prints "PROGRAM: what: strerror(errno)" and exits 2. */
void raw_fail(const char *what) __attribute__((noreturn));

/* CLOCK_MONOTONIC, in seconds. */
double raw_now(void);

#endif
