/*
 * Graceful upgrade (SIGUSR2), the way nginx does it: the binary on disk
 * (the path the listener was started from) is started again with the
 * same arguments and given the listening sockets; once it says it is
 * ready, the old listener closes its sockets, ends its ready pairs and
 * exits when its last session has ended. If the new one fails, the old
 * one keeps serving.
 *
 * The listener runs under a seccomp filter that forbids execve, and a
 * filter survives execve: a listener that exec'd itself would start the
 * new binary inside the old policy. So a helper is forked before the
 * filter, holding the sockets and nothing else, and it starts the new
 * binary when the listener asks. Both ends of its channel are the
 * listener's own code; no client byte ever reaches it.
 *
 * The hand-over reuses systemd's socket protocol (sd_listen_fds(3)):
 * LISTEN_FDS/LISTEN_PID, with LISTEN_FDNAMES naming each descriptor
 * twinftpd-ftp, twinftpd-ftps (implicit FTPS) or twinftpd-status, plus
 * TWINFTPD_UPGRADE_FD=N, a pipe on which the new listener writes its pid
 * and a newline once it accepts.
 */
#ifndef TW_UPGRADE_H
#define TW_UPGRADE_H

#include <stddef.h>
#include <sys/types.h>

/* The most a new listener may take to say it is ready. */
#define UPGRADE_READY_SECS 60

/* LISTEN_FDNAMES of the descriptors a listener hands over. */
#define UPGRADE_NAME_FTP "twinftpd-ftp"
#define UPGRADE_NAME_FTPS "twinftpd-ftps"
#define UPGRADE_NAME_STATUS "twinftpd-status"

/*
 * At start, in main(): the command line (kept, argv must outlive the
 * process) and the path of the binary, resolved now (an upgrade starts
 * whatever file is at that path then). Also takes TWINFTPD_UPGRADE_FD
 * from the environment when this process is the new listener of an
 * upgrade, and remembers NOTIFY_SOCKET for the next one.
 */
void upgrade_set_command(int argc, char **argv);

/* Whether this process was started by an upgrade (TWINFTPD_UPGRADE_FD). */
int upgrade_is_successor(void);

/*
 * The new listener accepts: tells the old one (its pid on the pipe), then
 * closes the pipe. Nothing when not started by an upgrade.
 */
void upgrade_signal_ready(void);

/*
 * In the standalone daemon, before it binds (so that the fork costs no
 * time after its port is open): forks the helper. Logs and returns -1 if
 * it cannot (SIGUSR2 is then refused with a log line).
 */
int upgrade_helper_start(void);

/*
 * In the listener, before its filter: gives the helper the n descriptors
 * fds to hand over, named names[i] (UPGRADE_NAME_*). Logged if it fails.
 */
void upgrade_helper_give(const int *fds, const char *const *names, size_t n);

/* The listener's end of the channel to the helper, to poll (-1: none). */
int upgrade_helper_fd(void);

/* SIGUSR2: asks the helper to start the new binary. 0, or -1 (logged). */
int upgrade_request(void);

/* What the helper said (after upgrade_helper_fd() became readable). */
enum upgrade_event {
	UPGRADE_NOTHING,	/* nothing complete yet */
	UPGRADE_STARTED,	/* the new binary runs, pid in *pid */
	UPGRADE_READY,		/* the new listener accepts, pid in *pid */
	UPGRADE_FAILED,		/* the reason is logged; this listener keeps serving */
	UPGRADE_HELPER_GONE,	/* the helper died: no more upgrades (logged) */
};
enum upgrade_event upgrade_read_event(pid_t *pid);

/* After UPGRADE_READY: the helper exits; its child, the new listener, lives on. */
void upgrade_helper_stop(void);

#endif
