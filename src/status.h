/*
 * The status socket (status_socket): the listener writes a snapshot of its
 * live state to whoever connects, and `twinftpd -S` prints it. The
 * listener never reads a byte from that socket: it accepts, checks that
 * the peer is root, writes without blocking, and drops a client that
 * does not read within STATUS_CLIENT_SECS.
 */
#ifndef TW_STATUS_H
#define TW_STATUS_H

#include <poll.h>
#include <stddef.h>

struct tw_config;

/* A client that has not read its snapshot by then is dropped. */
#define STATUS_CLIENT_SECS 5
/* Clients being written to at once; a further one is closed at once. */
#define STATUS_CLIENTS_MAX 4

/*
 * At start, as root and before the listener's filter: the socket at path,
 * or the one an upgrade handed over (inherited >= 0, kept when it is bound
 * to path, else closed). -1 (logged) when there is none.
 */
int status_socket_open(const char *path, int inherited);

/* The listener serves the status socket fd (-1: none) from now on. */
void status_start(int fd);

/* The listening socket, to hand over in an upgrade (-1: none). */
int status_fd(void);

/*
 * Stops serving: the listening socket is closed (and, unless an upgraded
 * listener now serves it, its file removed); pending clients are dropped.
 */
void status_stop(int unlink_path);

/* A line on the upgrade in progress, shown in the snapshot ("" for none). */
void status_set_upgrade_note(const char *note);

/* Fills p with what the status socket waits for; returns how many (<= max). */
size_t status_pollfds(struct pollfd *p, size_t max);

/* After poll: accepts and writes, given the entries status_pollfds filled. */
void status_events(const struct pollfd *p, size_t n, const struct tw_config *cfg);

/* The poll timeout, wait_ms lowered to the nearest client deadline. */
int status_poll_timeout(int wait_ms);

/*
 * twinftpd -S: connects to path, copies the snapshot to standard output.
 * Returns the exit status (0, or 1 with the reason on standard error).
 */
int status_print(const char *path);

#endif
