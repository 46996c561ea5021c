/*
 * FTP reply parsing for the load generator: an incremental reader of
 * (possibly multi-line) replies, and the PASV/EPSV/SIZE answers. Pure
 * code, no I/O, so it has its own unit test.
 */
#ifndef FB_FTPREPLY_H
#define FB_FTPREPLY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bytes kept per connection. A reply line longer than this inside a
 * multi-line reply is skipped; a final line that long is a protocol error
 * (no reply we act on is anywhere near it).
 */
#define FTP_REPLY_BUFSZ 512
#define FTP_REPLY_LASTSZ 160

struct ftp_reply {
	char buf[FTP_REPLY_BUFSZ];	/* received, not yet parsed */
	size_t len;
	int ml_code;			/* code of an open multi-line reply, or 0 */
	int skipping;			/* discarding the rest of an overlong line */
	char last[FTP_REPLY_LASTSZ];	/* text of the final line, after "ddd " */
};

void ftp_reply_init(struct ftp_reply *r);

/*
 * Where the caller appends bytes read from the socket, and how many fit.
 * After appending n bytes call ftp_reply_added(r, n).
 */
char *ftp_reply_space(struct ftp_reply *r, size_t *avail);
void ftp_reply_added(struct ftp_reply *r, size_t n);

/*
 * Takes the next complete reply out of the buffer. Returns 1 with *code
 * set (and r->last holding the final line's text), 0 when more bytes are
 * needed, -1 when the peer does not speak FTP replies.
 */
int ftp_reply_next(struct ftp_reply *r, int *code);

/* 227 text: "Entering Passive Mode (h1,h2,h3,h4,p1,p2)". Returns 0 or -1. */
int ftp_parse_pasv(const char *text, uint16_t *port);

/* 229 text: "Entering Extended Passive Mode (|||port|)". Returns 0 or -1. */
int ftp_parse_epsv(const char *text, uint16_t *port);

/* 213 text: a decimal size. Returns 0 or -1. */
int ftp_parse_size(const char *text, uint64_t *size);

#endif
