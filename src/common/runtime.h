/*
 * The runtime facts: what the listener resolves once at start (users,
 * namespaces, nice values) and every process of the server inherits by
 * fork. Written only by the listener before its first fork; read by all.
 */
#ifndef TW_RUNTIME_H
#define TW_RUNTIME_H

#include <netinet/in.h>
#include <sys/types.h>

#include "src/common/sockaddr.h"

/* The most of banner_file shown, as vsftpd's limit for the same file. */
#define TW_BANNER_MAX 4000

/* One uid's or gid's name (text_userdb_names). */
#define TW_IDNAME_MAX 32
struct tw_idname {
	unsigned id;
	char name[TW_IDNAME_MAX + 1];
};

/* Facts resolved once by the listener at start, shared by every session. */
struct tw_runtime {
	uid_t nopriv_uid;
	gid_t nopriv_gid;
	/*
	 * ftp_username, looked up once at start when anonymous_enable: an
	 * anonymous login then needs no user database (and no NSS modules
	 * loaded into every monitor).
	 */
	int have_ftp_user;
	uid_t ftp_uid;
	gid_t ftp_gid;
	char ftp_home[4096];
	/* chown_username's uid, looked up at start when chown_uploads. */
	uid_t chown_uid;
	/* isolate_network in effect: the shared empty namespace, else -1. */
	int netns_fd;
	/*
	 * Where a session monitor tells the listener who logged in
	 * (struct session_login_note in src/session.h); -1 in inetd mode
	 * and once the note is sent.
	 */
	int login_note_fd;
	/* isolate in effect (the kernel allows PID and IPC namespaces). */
	int isolate;
	/* The listener's nice value, and login_nice in effect (0: off). */
	int base_nice;
	int login_nice;
	/* banner_file's text, read at start (the pre-login worker opens nothing). */
	char banner[TW_BANNER_MAX + 1];
	/* pasv_address as an address (resolved with pasv_addr_resolve); 0: unset. */
	int have_pasv_addr;
	struct in_addr pasv_addr;
	/* proxy_protocol_trusted, parsed (config.c checked it); n == 0: off. */
	struct sa_cidr_list proxy_trusted;
	/* text_userdb_names: the user database's names, sorted by id. */
	const struct tw_idname *user_names, *group_names;
	size_t n_user_names, n_group_names;
};
extern struct tw_runtime tw_rt;

/* The name of uid (is_group 0) or gid in tw_rt's tables, or NULL. */
const char *tw_rt_id_name(unsigned id, int is_group);

#endif
