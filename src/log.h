/*
 * Logging. Root processes (listener, monitors) write lines to the log file
 * the listener opened, or to syslog. Sandboxed workers cannot open files:
 * their lines travel to the monitor as IPC_LOG messages, which the monitor
 * validates and writes.
 */
#ifndef TW_LOG_H
#define TW_LOG_H

struct tw_config;

enum tw_log_level { TW_LOG_ERR = 3, TW_LOG_WARN = 4, TW_LOG_INFO = 6, TW_LOG_DEBUG = 7 };

/* In the listener, before any fork: opens log_file or syslog. */
void log_open(const struct tw_config *cfg);
/* In a worker: from now on lines go over this IPC socket. */
void log_to_ipc(int ipc_fd);
/* The log file descriptor (-1 when syslog or none), to close in workers. */
int log_fd(void);
/* Sets the role name shown in each line ("listener", "monitor", ...). */
void log_set_role(const char *role);

void tw_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Writes a line that arrived from a worker: non-printable bytes become
 * '?', so a worker cannot forge extra lines or terminal escapes.
 */
void log_from_worker(int level, const char *text, int worker_pid);

#endif
