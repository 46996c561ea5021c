/*
 * The protocol worker: the only process that parses FTP. It runs
 * unprivileged and sandboxed; before login as nopriv_user in an empty
 * chroot, after login as the user.
 */
#ifndef TW_WORKER_H
#define TW_WORKER_H

#include <limits.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "privsep/ipc.h"

struct tw_config;

/* The control line bound (RFC 959 has none; vsftpd uses 4 KiB too). */
#define CTRL_MAX_LINE 4096

/* Unknown commands in a row tolerated before the session is closed (both
 * states); any known verb starts the count again. */
#define MAX_UNKNOWN_COMMANDS 16

struct ssl_st;

struct ctrl {
	int fd;
	/*
	 * The control connection's TLS session (pre-login worker and relay
	 * only): then replies are written and lines read through it, and
	 * tls_in holds what was decrypted past the last line taken.
	 */
	struct ssl_st *ssl;
	char *tls_in;
	size_t tls_in_len;
	/*
	 * The start of a command line taken off the socket before its LF:
	 * with SO_OOBINLINE a read stops at the urgent mark, so while a
	 * transfer runs, an ABOR whose mark lies inside its line can only be
	 * seen by taking the bytes before the mark. Never holds an LF (so
	 * nothing past a command's end is ever taken); the next line read
	 * starts with it. Only a post-login worker, the last reader of the
	 * connection, ever fills it. CTRL_MAX_LINE bytes of ctrl.c's .bss,
	 * not of struct session: a session lives in per-process .data
	 * (TW_PER_PROCESS), where 4 KB more made every worker two pages
	 * larger, while this buffer is touched only when urgent data comes.
	 */
	char *pending;
	size_t pending_len;
	/*
	 * While ctrl_read_line waits for a line, wake(wake_arg) runs once at
	 * wake_ms (CLOCK_MONOTONIC; 0: never), and the wait goes on: for
	 * what the session holds only for a while (dataconn.c's PASV socket
	 * made ahead). Not over TLS (the pre-login worker holds nothing).
	 */
	long long wake_ms;
	void (*wake)(void *arg);
	void *wake_arg;
};

/* Facts the monitor hands to a post-login worker. */
struct worker_login {
	char user[IPC_MAX_USER + 1];
	int anonymous;
	int chrooted;
	int tls;			/* the control connection is TLS (via a relay) */
	int prot_private;		/* PROT P before the login */
	struct sockaddr_storage peer, local;	/* of the control connection */
};

/* vsftpd shows a directory's message once per session; we remember this many. */
#define SESSION_DIRS_SEEN 32

struct session {
	const struct tw_config *cfg;
	struct ctrl ctrl;
	int ipc_fd;
	struct sockaddr_storage peer;	/* control connection's client */
	struct sockaddr_storage local;	/* control connection's server side */

	int logged_in;
	int anonymous;
	int tls;			/* control connection protected (RFC 4217) */
	int prot_private;		/* PROT P: data connections are TLS */
	char user[IPC_MAX_USER + 1];
	unsigned users_ahead;		/* USER_AHEAD requests sent (commands.c) */
	int ahead_waiting;		/* the last one named a local user */
	char *home;			/* where the login started ("~"), or NULL */
	unsigned unknown_cmds;		/* in a row, since the last known verb */

	int ascii;			/* TYPE A */
	unsigned mlst_facts;
	unsigned long long rest;	/* REST offset for the next RETR/STOR */
	int have_rnfr;			/* the RNFR path is in rnfr_path (commands.c) */
	int epsv_all;

	int pasv_fd;			/* listening passive socket, or -1 */
	/*
	 * Under isolate_network, the next PASV's socket asked of the monitor
	 * ahead while transfers come back to back (dataconn.c): the socket,
	 * or -1; whether its answer is still to be read; when it was asked
	 * for, and when the last PASV came (CLOCK_MONOTONIC ms).
	 */
	int pasv_ahead;
	int pasv_ahead_asked;
	long long pasv_ahead_ms;
	long long pasv_last_ms;
	int port_set;
	struct sockaddr_storage port_addr;

	/* Directories whose message_file was shown (dirmessage_enable). */
	struct dir_seen { dev_t dev; ino_t ino; } dirs_seen[SESSION_DIRS_SEEN];
	unsigned ndirs_seen;
};

/* --- worker.c --- */
/* ctrl_fd < 0: pre-forked, the control connection arrives as IPC_CLIENT_FD. */
void worker_prelogin_run(const struct tw_config *cfg, int ctrl_fd, int ipc_fd)
	__attribute__((noreturn));
void worker_postlogin_run(const struct tw_config *cfg, int ctrl_fd, int ipc_fd,
			  const struct worker_login *login) __attribute__((noreturn));
/* Sends one last reply and ends the session. */
void worker_exit_reply(struct session *s, int code, const char *text)
	__attribute__((noreturn));

/*
 * Tells the monitor, then makes the control handshake (AUTH TLS after its
 * 234, or implicit FTPS). Ends the session when it fails.
 */
void worker_start_tls(struct session *s);

/*
 * relay.c: the pre-login worker of a TLS session, logged in, becomes the
 * relay between the client's TLS and the user's worker's cleartext on
 * plain_fd. What the client sent past PASS is passed on first.
 */
void relay_run(struct session *s, int plain_fd) __attribute__((noreturn));

/* --- ctrl.c: the control channel --- */
enum ctrl_read {
	CTRL_LINE = 0,		/* a line is in the buffer */
	CTRL_EOF = -1,		/* peer closed or error */
	CTRL_TIMEOUT = -2,
	CTRL_TOO_LONG = -3,
	CTRL_BAD = -4,		/* contains NUL */
};

void ctrl_init(struct ctrl *c, int fd);
/*
 * Reads one command line, never consuming a byte past its LF (so nothing
 * sent before AUTH TLS can be replayed as if it came over TLS, and a
 * worker that exits after PASS leaves the rest for the next one). Strips
 * CRLF and telnet IAC sequences; maps "CR NUL" to CR (RFC 2640).
 * timeout_s 0 = wait forever.
 */
int ctrl_read_line(struct ctrl *c, char *buf, size_t cap, unsigned timeout_s);
/*
 * During a transfer: looks at the next command line without taking it.
 * Returns CTRL_PEEK_ABOR (and consumes the line) when it is ABOR,
 * CTRL_PEEK_OTHER for any other complete line (left for later),
 * CTRL_PEEK_PARTIAL when no full line is there yet, CTRL_PEEK_EOF when
 * the client closed the control connection. Bytes before an urgent mark
 * are taken into c->pending (CTRL_PEEK_AGAIN: look again at once).
 */
enum ctrl_peek {
	CTRL_PEEK_ABOR, CTRL_PEEK_OTHER, CTRL_PEEK_PARTIAL, CTRL_PEEK_EOF,
	CTRL_PEEK_AGAIN,	/* took the bytes before the urgent mark: look again */
};
int ctrl_peek_abor(struct ctrl *c);
/*
 * One reply line, "CODE<sep>text\r\n": sep '-' marks a line of a
 * multi-line reply, code 0 writes the text alone. All replies go through
 * ctrl_write.
 */
void ctrl_replyf(struct ctrl *c, int code, char sep, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* One reply line: "CODE text\r\n". */
#define ctrl_reply(c, code, ...)	ctrl_replyf((c), (code), ' ', __VA_ARGS__)
/* A line of a multi-line reply: "CODE-text\r\n". */
/*
 * text (an operator's or a user's file: banner_file, message_file) as
 * "code-" lines, one per line of it, each control byte shown as '?' so
 * that it cannot end the reply or forge another. The caller ends the
 * reply with ctrl_reply().
 */
void ctrl_reply_text(struct ctrl *c, int code, const char *text);
#define ctrl_reply_cont(c, code, ...)	ctrl_replyf((c), (code), '-', __VA_ARGS__)
/* A raw line (e.g. " text" inside a multi-line reply); CRLF appended. */
#define ctrl_reply_raw(c, ...)		ctrl_replyf((c), 0, ' ', __VA_ARGS__)
/* Writes all of buf or dies (the client is gone). */
void ctrl_write(struct ctrl *c, const char *buf, size_t len);
/* log_ftp_protocol: fn sees every reply line ctrl_write writes. */
void ctrl_log_replies(void (*fn)(const char *line, size_t len));
/* AUTH TLS (after its 234) or implicit FTPS: the handshake. 0 or -1. */
int ctrl_start_tls(struct ctrl *c, const struct tw_config *cfg);
/* The end of the session: our close_notify on a TLS control connection. */
void ctrl_end(struct ctrl *c);

/* --- proxyin.c: the PROXY protocol (proxy_protocol_trusted) --- */
/* Whether peer is a trusted balancer, one that must send a header. */
int proxy_trusted(const struct sockaddr_storage *peer);
/*
 * A trusted balancer's control connection: reads its header before the
 * greeting, tells the monitor who the client is and waits for its
 * admission; then s->peer is that client. A connection closed at once,
 * a LOCAL header (health checks), a bad or slow header (logged) or a
 * client the listener refuses end the session here.
 */
void proxy_prelogin(struct session *s);
/*
 * Any other source's first bytes: a PROXY header there is logged and
 * ends the session. Waits up to timeout_s (0: 5 s) for the first bytes,
 * and returns as soon as they are not a header.
 */
void proxy_refuse_header(struct session *s, unsigned timeout_s);
/*
 * A passive data connection fd from *peer: from a trusted balancer, its
 * header is read and *peer becomes the client it names. 0, or -1 (logged)
 * when a trusted source sent no good header.
 */
int proxy_data_client(struct session *s, int fd, struct sockaddr_storage *peer);

/* --- commands.c: the verb table --- */
/* Handles one command line in the session's state (s->logged_in). */
void cmd_dispatch(struct session *s, char *line);

/*
 * vsftpd's tilde in a path argument: "~" and "~/rest" name the directory
 * the login started in; with tilde_user_enable, "~user" and "~user/rest"
 * that user's home. Returns arg, or the expanded path in a buffer of
 * commands.c's, good until the next call.
 */
char *cmd_tilde_path(struct session *s, char *arg);
/*
 * dirmessage_enable: the current directory's message_file as "code-"
 * lines, once per directory and session; before the 230 of a login too,
 * as vsftpd shows the start directory's message.
 */
void cmd_dir_message(struct session *s, int code);

/*
 * testhooks.c: SITE TWTEST (test builds only). Returns 1 when it handled
 * the command, 0 when hooks are compiled out.
 */
int testhook_run(struct session *s, const char *arg);
/* The SITE subcommand of the hooks: "SITE TWTEST <action> [arg]". */
#define TESTHOOK_SITE_WORD "TWTEST"

/* A transfer or file-change line: logged only with xferlog_enable. */
void worker_xferlog(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A transfer ended (after its reply): the monitor writes its log lines,
 * adding the user and client (IPC_XFERLOG). path as the client named it.
 */
struct xfer;
void worker_xfer_done(struct session *s, const struct xfer *x, int upload, int ok,
		      const char *path);

/* Sends one line to the monitor's log. */
/*
 * chown_uploads: asks the monitor to give the file an anonymous upload
 * just created (file, open for writing) to chown_username. 0, or -1
 * (logged) when it did not.
 */
int worker_chown_upload(struct session *s, int file);
void worker_log(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
