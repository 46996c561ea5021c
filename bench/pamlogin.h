/*
 * One PAM login in two steps, as an FTP server takes it (bench/pamauth,
 * and rawsess serve's +pam floor): the start at USER, the password at PASS.
 */
#ifndef PAMLOGIN_H
#define PAMLOGIN_H

#include <security/pam_appl.h>

/* pam_start for user through service; NULL when it fails. */
pam_handle_t *pam_login_start(const char *service, const char *user);

/* pam_authenticate and pam_acct_mgmt with password, then pam_end;
 * PAM_SUCCESS or PAM's error. */
int pam_login_finish(pam_handle_t *ph, const char *password);

#endif
