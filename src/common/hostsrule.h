/*
 * The daemon list of a hosts_access(5) rule (/etc/hosts.allow,
 * /etc/hosts.deny), for tcp_wrappers=YES: which daemon names a rule
 * names, so that a start can warn about rules written for vsftpd. The
 * access decision itself is libwrap's (src/tcpwrap.c). Pure, unit-tested.
 */
#ifndef TW_HOSTSRULE_H
#define TW_HOSTSRULE_H

#define HOSTSRULE_NAMES_A 1u
#define HOSTSRULE_NAMES_B 2u

/*
 * rule is one logical rule (continuation lines joined): its daemon list
 * is the text before the first ':', tokens separated by blanks and
 * commas, EXCEPT among them. A token names a daemon when it is the name
 * or "name@host", case ignored, as libwrap compares them. Returns
 * HOSTSRULE_NAMES_A and/or HOSTSRULE_NAMES_B; 0 for a comment, a blank
 * line or a rule without a ':'.
 */
unsigned hostsrule_names(const char *rule, const char *a, const char *b);

#endif
