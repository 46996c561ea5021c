/*
 * The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1
 * and 2) that a load balancer sends before the client's first byte: who
 * the client is. The bytes come from a trusted balancer but relay what
 * the client's connection looked like, so they are parsed here, in pure
 * code that the pre-login worker (sandboxed, unprivileged) calls, that is
 * unit-tested and fuzzed. No I/O: the caller peeks at what arrived and
 * reads exactly the header's length once this says it is complete, so
 * that the FTP bytes after it stay in the socket.
 */
#ifndef TW_PROXYHDR_H
#define TW_PROXYHDR_H

#include <stddef.h>
#include <stdint.h>

/* Version 1: "PROXY ... \r\n", 107 bytes at most, CRLF included. */
#define PROXYHDR_V1_MAX 107
/* Version 2: 16 fixed bytes, then the address block and TLVs. */
#define PROXYHDR_V2_FIXED 16
/*
 * The longest address block and TLVs accepted. The protocol allows
 * 65535; HAProxy's own TLVs (ALPN, authority, CRC, unique id, SSL facts)
 * fit well below this, and a header is read into a stack buffer.
 */
#define PROXYHDR_V2_MAX_BODY 512
#define PROXYHDR_MAX (PROXYHDR_V2_FIXED + PROXYHDR_V2_MAX_BODY)

enum proxyhdr_status {
	PROXYHDR_OK = 0,	/* a whole header: *consumed bytes of it */
	PROXYHDR_MORE = 1,	/* good so far, not complete: wait for more */
	PROXYHDR_BAD = -1,	/* malformed (why says how) */
	PROXYHDR_TOO_LONG = -2,	/* longer than this side accepts */
};

enum proxyhdr_kind {
	/* A proxied TCP connection: the addresses are set. */
	PROXYHDR_PROXY = 1,
	/*
	 * No client behind it: version 2's LOCAL command (HAProxy's health
	 * checks) or version 1's "UNKNOWN". The addresses are not set.
	 */
	PROXYHDR_LOCAL = 2,
};

struct proxyhdr {
	int version;			/* 1 or 2 */
	enum proxyhdr_kind kind;
	int family;			/* AF_INET or AF_INET6 with PROXYHDR_PROXY */
	/* Network byte order; an IPv4 address in the first 4 bytes. */
	unsigned char src[16], dst[16];
	uint16_t src_port, dst_port;	/* host order */
};

/*
 * Parses the len bytes that have arrived so far. PROXYHDR_OK fills *h and
 * *consumed (the header's length; bytes past it are the client's and
 * untouched); PROXYHDR_MORE when they are a correct start; PROXYHDR_BAD
 * or PROXYHDR_TOO_LONG with a short reason in *why (static text).
 */
enum proxyhdr_status proxyhdr_parse(const unsigned char *buf, size_t len, struct proxyhdr *h,
				    size_t *consumed, const char **why);

enum proxyhdr_sniffed {
	PROXYHDR_SNIFF_NO = 0,
	PROXYHDR_SNIFF_YES,
	PROXYHDR_SNIFF_MORE,	/* a start of a signature, too short to tell */
};

/*
 * Whether the first bytes a client sent start a PROXY header (either
 * version's signature), for a source that may not send one.
 */
enum proxyhdr_sniffed proxyhdr_sniff(const unsigned char *buf, size_t len);

#endif
