/*
 * Logging. Root processes (listener, pre-login monitors) write lines to the
 * log file the listener opened, or to syslog. Sandboxed workers cannot open
 * files: their lines go to a sink the role installs (IPC_LOG messages to
 * the monitor, which validates them). A monitor that has become the user
 * sends its lines to the log writer (below). This layer knows no role.
 */
#ifndef TW_LOG_H
#define TW_LOG_H

#include <stddef.h>

struct tw_config;

enum tw_log_level { TW_LOG_ERR = 3, TW_LOG_WARN = 4, TW_LOG_INFO = 6, TW_LOG_DEBUG = 7 };

/* In the listener, before any fork: opens log_file or syslog. */
void log_open(const struct tw_config *cfg);

/*
 * With syslog_enable, when no syslog daemon listened on /dev/log at the
 * last open or reopen: what to warn (the lines still go there, and reach
 * a daemon that starts later); else NULL.
 */
const char *log_syslog_absent(void);
/*
 * In the listener, at a reload: opens log_file (or syslog) anew, so that
 * a log renamed by logrotate is left to it and a fresh file is started.
 * 0, or -1 with err set and the old destination kept. Sessions already
 * running keep the destination they inherited.
 */
int log_reopen(const struct tw_config *cfg, char *err, size_t errlen);

/* The longest text of one line, before the stamp and role are added. */
#define TW_LOG_MAX_TEXT 1024

/*
 * In a sandboxed process: from now on every line goes to sink (the worker
 * sends it to its monitor over IPC, privsep/ipc.h), and the log file
 * descriptors and the writer's socket are closed.
 */
typedef void (*log_sink_fn)(int level, const char *text);
void log_to_sink(log_sink_fn sink);
/*
 * In the standalone listener: its fatal errors (a port it cannot bind, a
 * user that does not exist) go to stderr as well as to the log, so the
 * operator who started it, or the service manager's journal, sees them.
 * Child processes do not inherit this.
 */
void log_errors_to_stderr(void);
/*
 * The log's descriptor: the log file or the syslog socket (-1 when none),
 * kept by the session processes and closed in workers.
 */
int log_fd(void);
/*
 * The xferlog_file descriptor (-1 when none): kept and closed like
 * log_fd(). log_xferlog() writes one xferlog(5) line: the current time,
 * then fields (everything after it, already formatted).
 */
int log_xferlog_fd(void);
void log_xferlog(const char *fields);
/*
 * The log writer: no process running as a login user holds the log file,
 * the xferlog or the syslog socket (invariant 6). A session's monitor,
 * once it has become the user, sends each line as a bounded record over
 * a datagram socket to the writer, a root process that holds the files:
 * the listener, or in inetd mode the session's first process. The
 * writer takes the sender's pid from the kernel (SO_PASSCRED), not from
 * the record, and makes each record one line with no control bytes, so a
 * session can neither write as another nor touch the files.
 *
 * log_open() makes the socket. log_writer_fd() is the senders' end,
 * kept by session monitors; log_writer_rx_fd() the writer's, which it
 * polls and then calls log_writer_serve() (a bounded batch of records,
 * never blocking; returns how many it read, the batch's size if more
 * may wait). log_writer_close_rx() in a process that is no writer.
 * log_to_writer(): from now on this process's lines (its own, those of
 * log_from_worker and log_xferlog) go to the writer, and its log and
 * xferlog descriptors are closed.
 */
void log_writer_open(void);
int log_writer_fd(void);
int log_writer_rx_fd(void);
void log_writer_close_rx(void);
int log_writer_serve(void);
void log_to_writer(void);
/*
 * Copies at most len bytes of text, up to its NUL, into out (outsz bytes,
 * always terminated), a control byte (a forged line, an escape) as '?'.
 * out may be text itself.
 */
void log_clean(char *out, size_t outsz, const char *text, size_t len);
/* Sets the role name shown in each line ("listener", "monitor", ...). */
void log_set_role(const char *role);

/*
 * One log line (cut at TW_LOG_MAX_TEXT), every control byte of the
 * formatted text written as '?' (log_clean): a name or path it quotes
 * cannot break it into two.
 */
void tw_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Writes a line that arrived from a worker: non-printable bytes become
 * '?', so a worker cannot forge extra lines or terminal escapes.
 */
void log_from_worker(int level, const char *text, int worker_pid);

#endif
