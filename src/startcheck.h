/*
 * What a start would find wrong outside the config file itself: users
 * that do not exist, directories that are missing, a PAM service without
 * its file. `twinftpd -t` runs these after the config's own checks, so
 * that one run names every problem.
 */
#ifndef TW_STARTCHECK_H
#define TW_STARTCHECK_H

#include "src/common/config.h"

/* Reports each problem (CFG_ERROR) and note; returns the number of errors. */
unsigned startcheck_report(const struct tw_config *cfg, cfg_report_fn report, void *ctx);

/*
 * A vsftpd.conf that turns on userlist_enable, chroot_list_enable or an
 * e-mail list without naming the file relied on vsftpd's file name;
 * twinftpd's default is another. For each such list whose vsftpd file
 * exists: when twinftpd's does not, cfg is changed to read vsftpd's;
 * when both exist, twinftpd's is read. Either way warn says which, and
 * the line that would choose. With tcp_wrappers, warns for each
 * hosts.allow/hosts.deny rule written for vsftpd alone (src/tcpwrap.h).
 */
void startcheck_vsftpd_files(struct tw_config *cfg, void (*warn)(const char *msg));

#endif
