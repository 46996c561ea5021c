/*
 * deny_file and hide_file: vsftpd's name filters, such as
 * "{*.mp3,*.mov,.private}". The filter is matched straight from the
 * config string, so a session keeps no parsed state and a malformed
 * filter cannot exist: every string is a filter.
 *
 * Syntax: one pair of braces around the whole value is optional; inside,
 * patterns are separated by commas; in a pattern '*' matches any run of
 * bytes (a leading dot too) and '?' any one byte; every other byte,
 * braces and backslash included, matches itself. An empty pattern
 * matches nothing, so "" and "{}" are filters that match nothing.
 */
#ifndef TW_NAMEFILTER_H
#define TW_NAMEFILTER_H

#include <stddef.h>

/* Whether name[0..len), one file name without '/', matches filter. */
int namefilter_match_name(const char *filter, const char *name, size_t len);

/*
 * Whether any component of path matches filter (vsftpd checks every
 * component for deny_file: a denied directory denies what is under it).
 * "." and ".." components are steps, not names, and never match.
 */
int namefilter_match_path(const char *filter, const char *path);

#endif
