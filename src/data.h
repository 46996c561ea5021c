/*
 * The worker's data path, in three parts:
 *   dataconn.c  PASV/EPSV and PORT/EPRT, and opening the data connection
 *               (accept with the peer check, connect, or a socket from
 *               the monitor under isolate_network and for port 20);
 *   transfer.c  the transfer engine (ABOR watch, data timeout, sendfile,
 *               ASCII conversion) and RETR, STOR, APPE, STOU;
 *   listcmd.c   LIST, NLST, MLSD and STAT <path>.
 * The data sockets themselves are made by privsep/datasock.c, which the
 * monitor shares.
 */
#ifndef TW_DATA_H
#define TW_DATA_H

#include <stddef.h>

struct session;
struct ipc_msg;
struct sockaddr_storage;

/* --- dataconn.c --- */
void data_close_pasv(struct session *s);
/*
 * Reads the monitor's answer to a PASV socket asked for ahead, if one is
 * due: before any request whose answer the worker waits for.
 */
void data_settle(struct session *s);
/*
 * Before each command: takes the answer when it is there already (never
 * waits), and closes a socket made ahead that has outlived its second.
 */
void data_ahead_tend(struct session *s);
/*
 * An address as IPC_PORT_CONNECT and IPC_PROXY_CLIENT carry it: the
 * family (4 or 6), then 16 bytes as 4 x u32 (the port is the caller's).
 */
void data_put_addr(struct ipc_msg *m, const struct sockaddr_storage *a);
/* PASV (extended 0) or EPSV (extended 1). */
void data_cmd_pasv(struct session *s, int extended, const char *arg);
/* PORT (extended 0) or EPRT (extended 1). */
void data_cmd_port(struct session *s, int extended, const char *arg);
/*
 * Connects the data connection that PASV or PORT prepared. Returns a
 * connected, non-blocking socket, or -1 after a 425 reply.
 */
int data_open(struct session *s);

/* --- transfer.c --- */
/* The session's limit for a file transfer, in bytes per second; 0: none. */
unsigned data_xfer_rate(const struct session *s);
void data_cmd_retr(struct session *s, const char *path);
/* STOR (0, 0), APPE (append 1) or STOU (unique 1). */
void data_cmd_store(struct session *s, const char *path, int append, int unique);

enum xfer_status {
	XFER_OK = 0, XFER_ABORTED, XFER_NET_ERR, XFER_FILE_ERR,
	XFER_TLS_ERR,			/* the data handshake failed or did not resume */
};

struct ssl_st;

/* One transfer on an open data connection. */
struct xfer {
	struct session *s;
	int fd;				/* the data socket */
	/*
	 * PROT P: the data connection's TLS session. The handshake waits
	 * for the first byte moved (or xfer_end): clients start it after
	 * the 150 reply.
	 */
	struct ssl_st *ssl;
	int tls_ready;
	int tls_end;			/* the upload's TLS stream ended ... */
	int tls_cut;			/* ... without the client's close_notify */
	int watch_ctrl;			/* still looking for ABOR */
	long long ctrl_retry_ms;	/* partial line seen: look again after this
					   (CLOCK_MONOTONIC) */
	unsigned long long bytes;	/* moved over the data connection */
	/* The send queue (transfer.c): small unless the client keeps up. */
	enum { XFER_LEAN, XFER_LEAN_SLOW, XFER_FULL } lean;
	int cork;			/* the sender wants TCP_CORK */
	long long wake_ms;		/* a wait for room ends then; 0 once it did */
	int slow_sent;			/* a slow reader's send, not yet waited for */
	long long mark_ms;		/* the queue's state changed then ... */
	unsigned long long mark_bytes;	/* ... when bytes was this */
	long long start_ms;		/* the connection's opening (CLOCK_MONOTONIC) */
	unsigned rate;			/* bytes per second at most; 0: no limit */
	long long pace_ms;		/* the rate is averaged since then ... */
	unsigned long long pace_bytes;	/* ... when bytes was this */
};

/*
 * data_open, then the transfer set up on the new socket. Returns 0, or
 * -1 after a reply. The caller sends its 150 reply, moves the data, and
 * ends with xfer_close and xfer_reply.
 */
int xfer_open(struct xfer *x, struct session *s);
/* Writes all of buf to the data socket, watching for ABOR. */
enum xfer_status xfer_write_all(struct xfer *x, const char *buf, size_t len);
/* 522 and 1 when the session must use PROT P for data and has not. */
int data_tls_refused(struct session *s);
/* A transfer that moved what it could (rc): ends TLS cleanly, closes. */
enum xfer_status xfer_end(struct xfer *x, enum xfer_status rc);
/* Abandons a data connection before any transfer (a refusal after xfer_open). */
void xfer_close(struct xfer *x);
/* The final reply of a transfer command; ok_text goes with 226. */
void xfer_reply(struct session *s, enum xfer_status rc, const char *ok_text);

/* --- listcmd.c --- */
enum list_mode { LISTMODE_LIST, LISTMODE_NLST, LISTMODE_MLSD };
/* LIST, NLST or MLSD over the data connection. */
void data_cmd_list(struct session *s, const char *arg, enum list_mode mode);
/* STAT <path>: a LIST listing inside a 213 reply on the control connection. */
void data_cmd_stat_list(struct session *s, const char *arg);
/* Whether deny_file denies path (any component of it): commands reply 550. */
int data_path_denied(const struct session *s, const char *path);

#endif
