/*
 * The service manager's readiness protocol (sd_notify(3)), without
 * libsystemd: one datagram of "NAME=value" lines to the AF_UNIX socket
 * named by $NOTIFY_SOCKET. Nothing happens when that is unset.
 */
#ifndef TW_SDNOTIFY_H
#define TW_SDNOTIFY_H

/*
 * At start, before any filter or fork: connects the socket $NOTIFY_SOCKET
 * names (then removes the variable, so that no session inherits it).
 * The descriptor is close-on-exec and closed in every session process.
 */
void sdnotify_init(void);

/* Sends state (e.g. "READY=1"); best effort, silent without a socket. */
void sdnotify(const char *state);

/* READY=1 with MAINPID (the listener, background=YES forked it). */
void sdnotify_ready(void);
/* RELOADING=1 with MONOTONIC_USEC (which Type=notify-reload wants). */
void sdnotify_reloading(void);

/*
 * Nothing more is sent: a listener that handed over to a new one
 * (SIGUSR2) is no longer the service's main process.
 */
void sdnotify_close(void);

/* The descriptor (-1: none), for the listener's children to close. */
int sdnotify_fd(void);

#endif
