/*
 * tcp_wrappers=YES: /etc/hosts.allow and /etc/hosts.deny decide, through
 * libwrap, whether a client may have a session, as in vsftpd. The rules
 * name the daemon "twinftpd".
 */
#ifndef TW_TCPWRAP_H
#define TW_TCPWRAP_H

#include <stddef.h>
#include <sys/socket.h>

#define TCPWRAP_DAEMON "twinftpd"

/*
 * Opens libwrap, which twinftpd does not link: the listener calls it
 * (derived_build) for a configuration with tcp_wrappers=YES, at start and
 * at each reload, before it forks the sessions that use it; -t calls it
 * too. Once loaded it stays. 0, or -1 with err set (no library, or one
 * that lacks what is used): such a start fails and such a reload is
 * refused, for no session must run with tcp_wrappers=YES unchecked.
 */
int tcpwrap_load(char *err, size_t errlen);

/*
 * In the session's pre-login monitor, for each client (the one a
 * balancer's PROXY header names, when there is one): 1 when the tables
 * let client reach local, 0 when they refuse it. The tables are read at
 * each call, so an edit counts from the next connection. A host name in
 * a rule costs a reverse lookup of the client (libwrap's, with its
 * forward check), in this session only. Options are not run: spawn
 * starts no program and a rule counts as its table says, except that a
 * matching twist rule refuses (its command would have replaced the
 * service). Refuses everybody should libwrap not be loaded.
 */
int tcpwrap_allows(const struct sockaddr_storage *client, const struct sockaddr_storage *local);

/*
 * At start and in -t: warns (through warn) about each rule that names
 * vsftpd but not twinftpd, which tcp_wrappers=YES here does not apply.
 */
void tcpwrap_warn_vsftpd_rules(void (*warn)(const char *msg));

#endif
