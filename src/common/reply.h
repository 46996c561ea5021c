/*
 * FTP replies (RFC 959 4.2): the one formatter of a reply line, and the
 * one way a process that does not serve the control connection (the
 * listener refusing a client, a monitor whose worker died) writes to it.
 * The protocol worker writes every other reply through src/ctrl.c, which
 * formats with reply_format() too.
 */
#ifndef TW_REPLY_H
#define TW_REPLY_H

#include <stdarg.h>
#include <stddef.h>

/* Longest reply line, CRLF included (a path in a 257 reply fits). */
#define REPLY_MAX_LINE (4096 + 16)

/*
 * Formats "CODE<sep>text\r\n" into buf (cap bytes, at least 8): code 0
 * gives a continuation line without a code (" text\r\n" in multi-line
 * replies). Text too long is cut; a CR or LF inside it (from a file name)
 * becomes '?', so a reply is always exactly one line. Returns the length.
 */
size_t reply_vformat(char *buf, size_t cap, int code, char sep, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/*
 * A last reply on a connection no worker serves: one non-blocking send
 * of "CODE text\r\n", best effort, never blocks; the caller closes next.
 * Only for a channel that is plain TCP: a channel in TLS is closed
 * without a word by a process that does not hold its TLS session.
 */
void reply_final(int fd, int code, const char *text);

#endif
