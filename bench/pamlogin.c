/* One PAM login in two steps (pamlogin.h). */
#include "pamlogin.h"

#include <stdlib.h>
#include <string.h>

static const char *password;

/* Answers every prompt with the password of the login being finished. */
static int
conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));
	int i;

	(void)data;
	if (r == NULL)
		return PAM_BUF_ERR;
	for (i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(password != NULL ? password : "");
			if (r[i].resp == NULL) {
				while (i-- > 0)
					free(r[i].resp);
				free(r);
				return PAM_BUF_ERR;
			}
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

static const struct pam_conv pc = { conv, NULL };

pam_handle_t *
pam_login_start(const char *service, const char *user)
{
	pam_handle_t *ph = NULL;

	if (pam_start(service, user, &pc, &ph) != PAM_SUCCESS) {
		if (ph != NULL)
			pam_end(ph, PAM_ABORT);
		return NULL;
	}
	return ph;
}

int
pam_login_finish(pam_handle_t *ph, const char *pw)
{
	int rc;

	password = pw;
	rc = pam_authenticate(ph, PAM_DISALLOW_NULL_AUTHTOK);
	if (rc == PAM_SUCCESS)
		rc = pam_acct_mgmt(ph, 0);
	pam_end(ph, rc);
	password = NULL;
	return rc;
}
