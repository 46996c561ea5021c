/*
 * The FTP control line as it arrives: RFC 959 runs the control connection
 * as a Telnet NVT (RFC 854), so a command line may carry Telnet commands
 * (clients put IAC IP, IAC DM before ABOR) and escaped 0xff bytes, and
 * RFC 2640 sends a CR inside a path name as CR NUL. These functions turn
 * those bytes into the command string the dispatcher sees. Pure code: no
 * I/O, unit-tested and fuzzed.
 */
#ifndef TW_CTRLLINE_H
#define TW_CTRLLINE_H

#include <stddef.h>
#include <sys/types.h>

/* Telnet command bytes, RFC 854 "TELNET COMMAND STRUCTURE". */
enum telnet_byte {
	TELNET_SE = 240,	/* end of subnegotiation: the lowest command */
	TELNET_NOP = 241,
	TELNET_DM = 242,	/* Data Mark: the urgent byte of a Synch */
	TELNET_BRK = 243,
	TELNET_IP = 244,	/* Interrupt Process */
	TELNET_AO = 245,
	TELNET_AYT = 246,
	TELNET_EC = 247,
	TELNET_EL = 248,
	TELNET_GA = 249,
	TELNET_SB = 250,
	TELNET_WILL = 251,	/* WILL .. DONT carry one option byte */
	TELNET_WONT = 252,
	TELNET_DO = 253,
	TELNET_DONT = 254,
	TELNET_IAC = 255,	/* "interpret as command"; IAC IAC is a data 0xff */
};

/*
 * Turns the bytes of one control line, its LF already cut off, into the
 * command string, in place: drops the CR before the LF, removes Telnet
 * commands (IAC x, and IAC WILL/WONT/DO/DONT with their option byte),
 * unescapes IAC IAC to one 0xff, and maps CR NUL to CR (RFC 2640). A
 * lone IAC at the very end is kept as data. buf must hold len + 1 bytes:
 * the result is NUL-terminated. Returns the command's length, or -1 when
 * a NUL byte is left (the line is refused: C strings cannot carry it).
 */
ssize_t ctrlline_parse(char *buf, size_t len);

/*
 * Whether the bytes of one control line, its LF already cut off, are the
 * command ABOR once cleaned as ctrlline_parse does (so "IAC IP IAC DM
 * ABOR", what clients send, is ABOR). Cleans buf in place: buf must hold
 * len + 1 bytes.
 */
int ctrlline_is_abor(char *buf, size_t len);

/*
 * The decision of the ABOR watch during a transfer (src/ctrl.c does the
 * socket I/O around it). line holds the `have` bytes already taken off
 * the socket (a line's start, no LF), then the n bytes one peek returned;
 * room is how many bytes that peek could have returned. at_mark(arg, n)
 * says whether the peek stopped at an urgent mark (with SO_OOBINLINE a
 * peek never moves past it); it is asked only when that matters.
 */
enum ctrlline_abor_peek {
	CTRLLINE_ABOR,		/* the first line is ABOR: take *take bytes (its LF last) */
	CTRLLINE_OTHER,		/* a complete other line, or one too long to be ABOR */
	CTRLLINE_PARTIAL,	/* no LF yet: look again when more arrives */
	CTRLLINE_TAKE_MARK,	/* no LF before the urgent mark: take *take bytes and look again */
};
/*
 * Cleans line in place when it looks for ABOR: line must hold have + n + 1
 * bytes. *take is set for CTRLLINE_ABOR and CTRLLINE_TAKE_MARK only, and
 * is never more than n.
 */
enum ctrlline_abor_peek ctrlline_abor_peek(char *line, size_t have, size_t n, size_t room,
					   int (*at_mark)(void *arg, size_t n), void *arg,
					   size_t *take);

#endif
