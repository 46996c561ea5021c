/*
 * TYPE A line-ending conversion, streaming: chunks may split a CRLF.
 */
#ifndef TW_ASCII_H
#define TW_ASCII_H

#include <stddef.h>

/*
 * Download direction: LF -> CRLF. A bare LF becomes CRLF; an existing
 * CRLF in the file is sent as is (no CRCRLF). *prev_cr carries whether
 * the previous chunk ended in CR. out must hold 2*n bytes. Returns the
 * number of bytes written to out.
 */
size_t ascii_to_net(const char *in, size_t n, char *out, int *prev_cr);

/*
 * Upload direction: CRLF -> LF, a lone CR is kept. *pending_cr carries a
 * CR that ended the previous chunk (not yet written). out must hold n+1
 * bytes. Returns bytes written. At end of stream call ascii_from_net_end.
 */
size_t ascii_from_net(const char *in, size_t n, char *out, int *pending_cr);
/* Flushes a pending CR at end of stream into out (1 byte). Returns 0 or 1. */
size_t ascii_from_net_end(char *out, int *pending_cr);

#endif
