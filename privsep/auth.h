/*
 * Authentication and the facts a post-login worker is built from. Runs in
 * the session monitor (root); PAM itself runs in a short-lived child so
 * that the long-lived monitor does not carry PAM's modules and heap.
 */
#ifndef TW_AUTH_H
#define TW_AUTH_H

#include <limits.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "privsep/ipc.h"

struct tw_config;

#define AUTH_MAX_GROUPS 256
/* Resource limits a login record can carry (RLIM_NLIMITS on Linux). */
#define AUTH_RLIMITS 16

struct auth_user {
	char name[IPC_MAX_USER + 1];
	uid_t uid;
	gid_t gid;
	gid_t groups[AUTH_MAX_GROUPS];
	int ngroups;
	char chroot_dir[PATH_MAX];	/* "" = not chrooted */
	char start_dir[PATH_MAX];	/* inside the chroot when chrooted */
	/* Anonymous privileges: an anonymous login, or a guest without
	 * virtual_use_local_privs. */
	int anonymous;
	/* guest_enable: a login PAM accepted, run as guest_username. */
	int guest;
	/* A per-user file (user_config_dir) set this session's options: the
	 * spare gets them as a second record (struct tw_config). */
	int own_config;
	mode_t umask;
	/*
	 * session_support: the resource limits the PAM session set
	 * (pam_limits) in the PAM child, for the worker to take as vsftpd's
	 * post-login process inherits them: bit r of rlim_set for each
	 * resource r given in rlim.
	 */
	uint32_t rlim_set;
	struct rlimit rlim[AUTH_RLIMITS];
};

/*
 * In the listener at start: loads the PAM service's modules once (a PAM
 * handle that is never ended), so that every login's short-lived PAM
 * child finds them already mapped instead of loading them again.
 */
void auth_preload(const struct tw_config *cfg);

/*
 * Checks a struct auth_user that came over a socket from another root
 * process of the session (the PAM child's answer, the monitor's hand-over
 * to the spare post-login worker): every string terminated inside its
 * array, the user named, no uid or gid 0, the group count in bounds,
 * absolute directories, a umask. 0 when it is sound, -1 otherwise.
 * Pure (auth_check.c), unit-tested.
 */
int auth_user_check(const struct auth_user *u);

/* Whether user names an anonymous login ("anonymous" or "ftp"). */
int auth_is_anonymous_name(const char *user);

/*
 * What a login attempt came to. Only AUTH_DENIED is a guess that failed
 * (and counts against the client's address): AUTH_UNAVAILABLE is the
 * server's own trouble (PAM or the user database not answering, no
 * process for PAM, an account the server refuses to run), which must
 * not lock out the users behind an address.
 */
enum auth_result {
	AUTH_OK = 0,
	AUTH_DENIED = -1,	/* wrong password, unknown or refused user */
	AUTH_UNAVAILABLE = -2,	/* could not be checked, or refused by the server */
};

/*
 * Checks user and pass. Returns AUTH_OK and fills *u on success, else
 * why not (the reason is logged, never told to the client).
 */
int auth_login(const struct tw_config *cfg, const char *user, const char *pass,
	       const char *peer_ip, struct auth_user *u);

/*
 * session_support: at the session's end, in the monitor, after its
 * workers: tells the PAM child that holds the session since the login to
 * close it (pam_close_session, the logout in utmp and wtmp) and waits
 * for that, 10 s at most. Nothing when no session is held.
 */
void auth_session_end(void);

/*
 * At USER, in the monitor: forks the PAM child of a local login of user
 * now, before the password (which it then waits for), so that the
 * user's lookup and pam_start overlap the client's way to PASS. cfg is
 * the config LOGIN will pass auth_login() (the monitor's, or the user's
 * own in its usual place). Nothing for a name auth_login() would not
 * give to PAM (anonymous, or local_enable off). An earlier one ends.
 */
void auth_ahead_start(const struct tw_config *cfg, const char *user, const char *peer_ip);

/*
 * Ends the child auth_ahead_start() forked, if auth_login() did not use
 * it: at every LOGIN's end and the session's. It has no password yet.
 */
void auth_ahead_end(void);

/*
 * user_config_dir: *out becomes cfg with the options of the login's
 * per-user file applied (the file named user, or ftp_username for an
 * anonymous login). Returns 1 when a file was applied, 0 when there is
 * none (no user_config_dir, no such file; *out is cfg), and -1 when the
 * login must be refused (the name can name no file in the directory, or
 * the file is unsafe or has an error), with the reason logged. The file
 * is the operator's; the name came from the client and is checked
 * before it is used: no '/', no leading '.', no control byte.
 */
int auth_user_config(const struct tw_config *cfg, const char *user, struct tw_config *out);

/*
 * Whether name is listed in file (one name per line, '#' comments,
 * trailing blanks ignored; a line longer than any name matches nothing):
 * 1 or 0, or -1 (errno set) when the file cannot be read or is larger
 * than 1 MB (EFBIG), which each caller treats as a refusal: vsftpd too
 * refuses every login then.
 */
int auth_name_in_file(const char *file, const char *name);

/*
 * userlist_enable's verdict on user, logged when it refuses: 1 allowed,
 * 0 refused by the list, -1 the list cannot be read (every login is
 * refused, in userlist_deny mode too, as in vsftpd).
 */
int auth_userlist_allows(const struct tw_config *cfg, const char *user);

/*
 * What PAM is given as PAM_RHOST for a client at peer_ip (text): with
 * reverse (reverse_lookup_enable) its reverse DNS name when it has one
 * that resolves back to peer_ip (1), else the address itself (0); -1
 * when out is too small.
 */
int auth_rhost(const char *peer_ip, int reverse, char *out, size_t outsz);

#endif
