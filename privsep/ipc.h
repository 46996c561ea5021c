/*
 * Typed IPC between a session monitor and its protocol worker.
 *
 * Transport: an AF_UNIX SOCK_SEQPACKET socketpair, so one datagram is one
 * message. Wire format of a message, all integers little-endian:
 *
 *   u16 type | u16 reserved (0) | u32 payload length | payload
 *
 * The payload is a sequence of typed fields written by the ipc_put_*
 * functions: u32 (4 bytes) and str (u32 length, then that many bytes, no
 * NUL). A file descriptor rides with SCM_RIGHTS only on the message types
 * whose schema declares one. Decoders reject anything short, long, unknown
 * or with an unexpected descriptor; getters never return partial values.
 */
#ifndef TW_IPC_H
#define TW_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "src/common/log.h"

#define IPC_HDR_LEN 8
#define IPC_MAX_PAYLOAD 4096
#define IPC_MAX_MSG (IPC_HDR_LEN + IPC_MAX_PAYLOAD)

/* Bounds on string fields. */
#define IPC_MAX_USER 256
#define IPC_MAX_PASS 256
#define IPC_MAX_LOGMSG TW_LOG_MAX_TEXT

enum ipc_type {
	IPC_NONE = 0,
	/* worker -> monitor */
	IPC_LOGIN,		/* str user, str pass, u32 flags (IPC_LOGIN_TLS...) */
	IPC_LOG,		/* u32 level, str text */
	IPC_PORT20_CONNECT,	/* u32 port: connect to the control peer from ftp_data_port */
	IPC_PASV_LISTEN,	/* no payload: a listening socket in the pasv port range */
	IPC_PORT_CONNECT,	/* u32 family (4|6), 4 x u32 address (network order bytes), u32 port */
	/* monitor -> worker */
	IPC_LOGIN_RESULT,	/* u32 result (enum ipc_login_result); fd: over
				 * TLS, an OK's relay end of the cleartext channel */
	IPC_FD_RESULT,		/* u32 errno (0 = ok); fd present iff errno == 0 */
	/* listener -> pooled monitor, and monitor -> pre-login worker */
	IPC_CLIENT_FD,		/* no payload; fd: the accepted control connection */
	/* pre-login worker -> monitor: got the connection, touches it now */
	IPC_CLIENT_ACK,		/* no payload */
	/* a sandboxed process, from its SIGSYS handler -> monitor */
	/* worker -> monitor, before login: the control connection turns TLS
	 * (sent before AUTH's 234 or implicit FTPS's handshake): from now on
	 * the monitor writes nothing to the client. No payload. */
	IPC_TLS_ON,
	IPC_SANDBOX_VIOLATION,	/* u32 syscall number (IPC_SYSCALL_UNKNOWN: none), u32 enum sandbox_role */
	/* post-login worker -> monitor: a transfer ended, for the transfer logs */
	IPC_XFERLOG,		/* u32 flags (IPC_XFER_*), u32 bytes high, u32 bytes low, u32 ms, str path */
	/* pre-login worker -> monitor, first of all, from a trusted balancer:
	 * the client its PROXY header named, as IPC_PORT_CONNECT's fields */
	IPC_PROXY_CLIENT,	/* u32 family (4|6), 4 x u32 address, u32 port */
	/* monitor -> worker: the listener admitted that client (else: 421, end) */
	IPC_PROXY_OK,		/* no payload */
	/* post-login worker -> monitor, with chown_uploads: the file an
	 * anonymous upload just created, to be given to chown_username */
	IPC_CHOWN_UPLOAD,	/* no payload; fd: the new file, open for writing */
	/* monitor -> worker: the answer to IPC_CHOWN_UPLOAD */
	IPC_CHOWN_RESULT,	/* u32 errno (0 = done) */
	/* pre-login worker -> monitor, at USER with userlist_enable: may this
	 * name go on to PASS? Answered with IPC_LOGIN_RESULT. */
	IPC_USER_CHECK,		/* str user */
	/* pre-login worker -> monitor, at USER of a local user: the PAM
	 * child may start now (auth_ahead_start()). No answer. */
	IPC_USER_AHEAD,		/* str user */
	IPC_TYPE_COUNT
};

/* IPC_XFERLOG's flags; any other bit is a malformed request. */
enum ipc_xfer_flag {
	IPC_XFER_UPLOAD = 1 << 0,	/* else a download */
	IPC_XFER_OK = 1 << 1,		/* completed */
	IPC_XFER_ASCII = 1 << 2,	/* TYPE A */
	IPC_XFER_ALL = (1 << 3) - 1,
};
/* The longest path an IPC_XFERLOG names (the payload's room). */
#define IPC_MAX_XFERPATH (IPC_MAX_PAYLOAD - 4 * 4 - 4)

/* IPC_SANDBOX_VIOLATION's number when the trap named no syscall. */
#define IPC_SYSCALL_UNKNOWN UINT32_MAX

enum ipc_login_result {
	IPC_LOGIN_OK = 0,
	IPC_LOGIN_FAIL = 1,	/* wrong user or password: 530, may retry */
	IPC_LOGIN_CLOSE = 2,	/* too many failures: close the session */
	IPC_LOGIN_BROKEN = 3,	/* USER_CHECK: the list cannot be read: 421, close */
};

/* IPC_LOGIN's flags: what the pre-login worker's session had agreed. */
#define IPC_LOGIN_TLS		0x1u	/* the control connection is TLS */
#define IPC_LOGIN_PROT_P	0x2u	/* PROT P (or AUTH SSL) before the login */
#define IPC_LOGIN_FLAGS		(IPC_LOGIN_TLS | IPC_LOGIN_PROT_P)

enum ipc_fd_rule { IPC_FD_NEVER, IPC_FD_ALWAYS, IPC_FD_OPTIONAL };

struct ipc_schema {
	const char *name;
	enum ipc_fd_rule fd;
	uint32_t max_payload;	/* payloads longer than this are rejected */
};

/* Indexed by enum ipc_type. */
extern const struct ipc_schema ipc_schemas[IPC_TYPE_COUNT];

struct ipc_msg {
	uint16_t type;
	uint32_t len;			/* payload bytes used */
	uint32_t rpos;			/* read cursor for the getters */
	int fd;				/* -1 when none */
	int overflow;			/* a put did not fit: sending fails */
	unsigned char payload[IPC_MAX_PAYLOAD];
};

/* Error codes of the decoder and receiver (negative). */
enum ipc_err {
	IPC_OK = 0,
	IPC_E_SHORT = -1,	/* shorter than a header, or payload shorter than declared */
	IPC_E_LONG = -2,	/* longer than declared or than the type allows */
	IPC_E_TYPE = -3,	/* unknown type */
	IPC_E_FD = -4,		/* descriptor missing, unexpected or truncated */
	IPC_E_EOF = -5,		/* peer closed */
	IPC_E_IO = -6,		/* recvmsg/sendmsg failed (see errno) */
	IPC_E_FIELD = -7,	/* getter: field absent, too long, or bad */
	IPC_E_RESERVED = -8,	/* reserved header bits set */
	IPC_E_EMPTY = -9,	/* a datagram of zero bytes from a live peer */
};

const char *ipc_strerror(int err);

/* --- Pure codec (ipc_codec.c): no I/O, unit-tested and fuzzed --- */

void ipc_init(struct ipc_msg *m, enum ipc_type type);
void ipc_put_u32(struct ipc_msg *m, uint32_t v);
void ipc_put_str(struct ipc_msg *m, const char *s, size_t len);

/* Each getter returns 0 or IPC_E_FIELD and then leaves *out untouched. */
int ipc_get_u32(struct ipc_msg *m, uint32_t *out);
/* Copies a string field of at most maxlen bytes into buf (bufsz > maxlen),
 * NUL-terminated; a field containing a NUL byte is rejected. */
int ipc_get_str(struct ipc_msg *m, char *buf, size_t bufsz, size_t maxlen, size_t *lenout);
/* 0 when every payload byte has been read, else IPC_E_LONG. */
int ipc_get_end(const struct ipc_msg *m);
/* IPC_FD_RESULT carries a descriptor iff its errno field (err, already
 * read with ipc_get_u32) is 0. 0, IPC_E_FD, or IPC_E_TYPE for another type. */
int ipc_check_fd_result(const struct ipc_msg *m, uint32_t err);

/* Serialises header+payload into buf; returns bytes or a negative error. */
int ipc_encode(const struct ipc_msg *m, unsigned char *buf, size_t cap);
/* Parses one datagram of n bytes; has_fd says whether a descriptor came
 * with it (the caller stores it in m->fd after success). */
int ipc_decode(const unsigned char *buf, size_t n, int has_fd, struct ipc_msg *m);

/* --- Socket I/O (ipc.c) --- */

/* Creates the SOCK_SEQPACKET pair, close-on-exec. 0 or -1. */
int ipc_socketpair(int sv[2]);
/* Sends m (and m->fd if >= 0 and the schema allows). 0 or negative. */
int ipc_send(int sock, const struct ipc_msg *m);
/* The same, but never waits for room in the socket (IPC_E_IO, EAGAIN):
 * for a process that must not block, such as one dying of SIGSYS. */
int ipc_send_nowait(int sock, const struct ipc_msg *m);
/* Receives one message; any descriptor beyond the schema is closed and
 * the message rejected. 0 or negative. */
int ipc_recv(int sock, struct ipc_msg *m);

/*
 * A fixed-size record between two root processes of one session (the
 * monitor and its PAM child or its spare post-login worker): exactly len
 * bytes and exactly one descriptor with it (fd < 0: none). The receiver
 * rejects any other size or descriptor count; checking the record's
 * fields is the caller's (e.g. auth_user_check()). 0 or negative.
 */
int ipc_send_record(int sock, const void *rec, size_t len, int fd);
int ipc_recv_record(int sock, void *rec, size_t len, int want_fd, int *fd_out);

/* In a sandboxed process: every log line from now on goes to the
 * monitor as an IPC_LOG message on sock (log_to_sink()). */
void ipc_log_to(int sock);

/*
 * In a sandboxed process: a syscall its filter forbids is reported to the
 * monitor on sock as one IPC_SANDBOX_VIOLATION, from the SIGSYS handler
 * (sandbox_set_violation_report()), before the process dies of it.
 * sock < 0: no report.
 */
void ipc_report_violations_to(int sock);

#endif
