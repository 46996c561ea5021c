/*
 * The one table of configuration facts: name, type, default, bounds, doc.
 * The struct, the parser, `twinftpd -t` and the options section of
 * twinftpd.conf(5) are all generated from these lines, so they cannot
 * drift apart. No include guard: included with different X-macros.
 *
 * CFG_BOOL(name, default, doc)
 * CFG_UINT(name, default, min, max, doc)
 * CFG_OCTAL(name, default, max, doc)     -- umasks and modes, written 0NNN
 * CFG_STR(name, default, doc)            -- default may be "" (unset)
 */

/* --- Listening --- */
CFG_BOOL(listen, 1,
	"Run as a standalone daemon listening on IPv4. With listen=NO and listen_ipv6=NO the server runs in inetd mode: one session on standard input and output, as started by inetd, xinetd or a systemd socket unit with Accept=yes.")
CFG_BOOL(listen_ipv6, 0,
	"Listen on IPv6. With listen=NO this is one dual-stack socket that IPv4 clients reach too (as IPv4-mapped addresses, logged and answered as plain IPv4), as vsftpd does with Debian's vsftpd.conf; listen_address6 set to an IPv6 address other than :: or ::ffff:a.b.c.d limits it to that address, and so to IPv6. With listen=YES as well, the IPv6 socket is IPv6-only and the IPv4 one serves IPv4.")
CFG_STR(listen_address, "",
	"IPv4 address to listen on; empty means all addresses.")
CFG_STR(listen_address6, "",
	"IPv6 address to listen on; empty means all addresses.")
CFG_UINT(listen_port, 21, 1, 65535,
	"TCP port for the control connection.")
CFG_BOOL(background, 0,
	"In standalone mode, fork into the background and detach from the terminal.")
CFG_BOOL(tcp_wrappers, 0,
	"Let /etc/hosts.allow and /etc/hosts.deny (hosts_access(5), through libwrap) decide which clients get a session, as vsftpd does: a refused client gets \"421 Service not available.\" and is closed before any worker speaks to it. The rules name the daemon twinftpd (not vsftpd: a rule that names vsftpd alone is not applied, and the start and -t warn about each such line); the tables are read for each connection, so an edit counts from the next one. The session's monitor asks, not the listener: a host name in a rule costs that session a reverse lookup of its client (with libwrap's forward check). Behind a balancer (proxy_protocol_trusted) the client its PROXY header names is checked. Options of a rule run nothing: spawn and twist start no program (the monitor runs none); a matching rule allows or refuses as its table or its allow/deny option says, except that a rule with twist refuses (its command would have taken the client's connection instead of FTP). libwrap (libwrap.so.0, Debian's package libwrap0) is opened only when this option is YES, at start or at the reload that sets it: where it cannot be opened, such a start fails and such a reload is refused, saying why, and -t reports it.")
CFG_UINT(max_clients, 2000, 0, 100000,
	"Most concurrent sessions; the next connection gets 421 and is closed before any session process is given to it. A session counts until its connection closes, which is about 20 ms after its last reply (QUIT's 221): a client that reconnects at the 221 may still find the slot taken. 0 means no limit.")
CFG_UINT(max_per_ip, 50, 0, 100000,
	"Most concurrent sessions from one client address, each counted until its connection closes (as for max_clients); 0 means no limit.")
CFG_UINT(source_penalty_sessions, 10, 0, 100000,
	"Sessions from one client address that may end badly (closed after max_login_fails failed logins, or a worker that crashed or broke the IPC rules) within source_penalty_time seconds; the next connection from that address within the same time gets 421 and is closed before any session process is given to it. 0 turns penalties off.")
CFG_UINT(source_penalty_time, 60, 1, 86400,
	"Seconds a penalised address is refused, and the window in which its bad sessions are counted.")
CFG_UINT(source_penalty_fails, 10, 0, 100000,
	"Failed logins one client address may make per source_penalty_time seconds, counted over all its sessions however each ends (closed, QUIT, timed out, crashed, or logged in after failing): each failure is forgiven one interval (source_penalty_time / source_penalty_fails seconds) after the one before it is. While source_penalty_fails failures are not yet forgiven, its connections get 421 and are closed before any session process is given to them. A session's failures are counted when it ends, so sessions that guess at the same moment all finish (at most max_per_ip times max_login_fails guesses), and each of their failures lengthens the refusal; a refusal lasts at most 60 times source_penalty_time, and failures beyond that are forgiven. So an address whose sessions at once can guess fewer than 60 times source_penalty_fails (max_per_ip times max_login_fails: 150 at the defaults; max_per_ip=0 lifts that bound) makes source_penalty_fails guesses, then what its sessions already running still make, and then on average one per interval; at the defaults 10 and then one every 6 seconds (0.17 guesses a second, 600 an hour), where without it max_per_ip sessions of max_login_fails guesses each, delay_failed_login apart, allowed about 30 a second. A successful login forgives nothing (else an anonymous login would reset the count). 0 turns this off.")
CFG_UINT(prefork_sessions, 32, 0, 4096,
	"Sessions (a monitor with its pre-login worker and its spare post-login worker, already chrooted and sandboxed) the listener keeps ready at least, so that a new connection costs a descriptor hand-off instead of three forks and a sandbox set-up. The pool is refilled outside the accept path: once connections pause for 50 ms, four sessions every 50 ms (at once when fewer than a quarter of its sessions are left); when a burst empties it, further connections are forked on demand, and each of them makes the pool one session larger, up to prefork_max_sessions. 0 forks every session on accept.")
CFG_UINT(login_nice, 10, 0, 19,
	"How much nicer (scheduling priority, as nice(1)) than the listener a session runs until its login: ready sessions of the pool, the monitor and the pre-login worker of a client that has not logged in yet (the password hash itself runs at SCHED_IDLE, or with session_support at this nice value: that process outlives the login). At the login the monitor and the post-login worker go back to the listener's priority. So a flood of connections or logins takes CPU time only from what logged-in sessions leave. Needs CAP_SYS_NICE (to give the priority back), which the monitor keeps until the login; without it, the option is off and the start says so. 0: sessions run at the listener's priority throughout.")
CFG_UINT(prefork_max_sessions, 256, 0, 4096,
	"The most sessions the pool grows to after bursts (see prefork_sessions). Each minute without a connection that found the pool empty halves what it holds above prefork_sessions, ending the idle sessions beyond that. A value below prefork_sessions means prefork_sessions: a pool of fixed size.")
CFG_STR(proxy_protocol_trusted, "",
	"Load balancers (addresses or networks, \"127.0.0.1/32,10.0.0.0/8,::1\", at most 32) whose connections start with a PROXY protocol header (HAProxy's send-proxy or send-proxy-v2; versions 1 and 2) naming the real client. That client's address is then the one max_per_ip, the source penalties, every log line, pasv_promiscuous, port_promiscuous and the bounce check use; a passive data connection from a trusted balancer must carry a header too (send-proxy-v2 on the passive ports' frontends) naming the same client. A connection from a trusted source without a header (or with a malformed one, or whose header takes more than 5 seconds), and a header from any other source, is closed with a log line naming the source. A version 2 LOCAL header (a balancer's health check) or a version 1 UNKNOWN one is closed quietly, as is a trusted connection closed before its first byte. Other sources are served as usual. Empty (the default): no PROXY protocol. See RUNNING A CLUSTER.")
CFG_STR(status_socket, "/run/twinftpd.sock",
	"AF_UNIX socket (mode 0600, root's) on which the standalone listener writes a snapshot of its live state to whoever connects: what `twinftpd -S` prints (sessions by state, user and client address, the ready pool, penalties in force, uptime, the configuration file and its reload count). The listener never reads from it. A stale socket left by a listener that died is replaced; one another listener still answers on is left alone (the start says so and runs without). Empty: no status socket. Kept across an upgrade (SIGUSR2); a reload cannot change it.")

/* --- Users and login --- */
CFG_BOOL(anonymous_enable, 1,
	"Allow anonymous logins as \"anonymous\" or \"ftp\". They run as ftp_username, chrooted to anon_root (or that user's home directory), read-only unless the anon_* write options say otherwise. The default is vsftpd's, so that a vsftpd.conf that leaves the line out means here what it meant there; twinftpd's own configuration file sets it to NO. Without the user ftp_username the start goes on with a warning and anonymous logins are refused (530), as vsftpd refuses them.")
CFG_STR(ftp_username, "ftp",
	"Local user whose uid, gid and home directory anonymous sessions use.")
CFG_STR(anon_root, "",
	"Directory anonymous sessions are chrooted to; empty means the home directory of ftp_username.")
CFG_BOOL(no_anon_password, 0,
	"Do not ask anonymous users for a password (reply 230 to USER).")
CFG_BOOL(deny_email_enable, 0,
	"Refuse an anonymous login whose password (an e-mail address, by custom) is a line of banned_email_file, as vsftpd: 530, counted as a failed login. The session monitor reads the file at each anonymous login; lines are compared whole (trailing blanks and lines starting with # ignored). A file that cannot be read refuses every anonymous login, with a log line; -t reports it.")
CFG_STR(banned_email_file, "/etc/twinftpd.banned_emails",
	"The list deny_email_enable reads, one password per line (vsftpd's default is /etc/vsftpd.banned_emails: left at this default, with twinftpd's file missing and vsftpd's there, vsftpd's is read, with a warning from -t and the start).")
CFG_BOOL(secure_email_list_enable, 0,
	"Admit an anonymous login only with a password that is a line of email_password_file, as vsftpd: a low-hassle shared password for content that needs little protection. Any other password gets 530 and counts as a failed login. The file is read and compared as banned_email_file; one that cannot be read refuses every anonymous login.")
CFG_STR(email_password_file, "/etc/twinftpd.email_passwords",
	"The list secure_email_list_enable reads, one password per line (vsftpd's default is /etc/vsftpd.email_passwords, read instead as for banned_email_file).")
CFG_BOOL(local_enable, 0,
	"Allow local users (authenticated through PAM) to log in. The default is vsftpd's: a vsftpd.conf for an anonymous-only site may leave the line out, and local users must then not log in; twinftpd's own configuration file sets it to YES.")
CFG_STR(pam_service_name, "twinftpd",
	"PAM service used to authenticate local users. A path (/etc/pam.d/vsftpd) names its last part (vsftpd), as Linux-PAM reads it for vsftpd; -t and the start say so.")
CFG_BOOL(session_support, 0,
	"vsftpd's option: for each local (and guest) login, open a PAM session (pam_setcred, then pam_open_session, so the service's session modules run, such as pam_limits' maxlogins) and write the login to utmp and wtmp (the line is ftpd:PID, PID the session monitor's, so last(1) lists FTP sessions); at the session's end, pam_close_session and the logout record. The process that ran PAM stays for the session's life to do that: a root process per logged-in session that reads nothing from the client or its worker, only one byte from the session's monitor (see twinftpd(8)). A session PAM refuses to open refuses the login (530); Linux-PAM refuses every session of a service whose file has no session line, which -t notes. Modules that run programs (pam_exec, pam_mkhomedir's helper) cannot: PAM runs under the monitor's seccomp policy, which allows no exec. The resource limits the session's modules set (pam_limits: fsize, as, data, cpu, ...) are carried to the session's worker, as vsftpd's post-login process inherits them, except nofile, nproc and core, which the worker's sandbox sets itself; a file size limit fails an upload with 451. A limit above the daemon's own cannot be set (no process of a session may raise one): pam_limits then refuses the session, and the login. Anything else a module does to the calling process (pam_loginuid, pam_systemd's cgroup) stays with that process. Anonymous logins use no PAM and get no session. NO: no PAM session, no utmp or wtmp records, and no root process after the login.")
CFG_BOOL(reverse_lookup_enable, 0,
	"Red Hat's vsftpd option: give PAM the client's host name (its reverse DNS name, looked up at each login by the process that runs PAM) as PAM_RHOST instead of its address, for pam_access rules that name hosts. A client whose address has no name is given as its address. Off: the address, as upstream vsftpd does (Red Hat's default is YES: set it for such rules). A name comes from the client's DNS: rules that allow by name trust it.")
CFG_STR(local_root, "",
	"Directory local users start in (and are chrooted to when chrooted) instead of their home directory.")
CFG_STR(user_sub_token, "",
	"A string (such as $USER) that is replaced, wherever it occurs in local_root, by the name of the user logging in: local_root=/home/$USER/ftp. A name that is empty, \".\", \"..\" or contains '/' is refused.")
CFG_BOOL(chroot_local_user, 0,
	"Chroot local users to their home directory (or local_root). With chroot_list_enable the list names the exceptions.")
CFG_BOOL(passwd_chroot_enable, 0,
	"For a local or guest login that is chrooted (chroot_local_user, chroot_list_enable), a home directory in the user database that holds /./ names where the jail is: /srv/jail/./home/bob chroots the session to /srv/jail and starts it in /home/bob inside it, as vsftpd does (the first /./ counts; user_sub_token is replaced in the home first). Such a home takes precedence over local_root; a home without /./ is used as before. A login that is not chrooted starts in the whole home directory. A home that starts with /./ names no jail and its login is refused with 530 and a log line.")
CFG_BOOL(chroot_list_enable, 0,
	"Use chroot_list_file: with chroot_local_user=NO it names the users who are chrooted, with YES the users who are not.")
CFG_STR(chroot_list_file, "/etc/twinftpd.chroot_list",
	"File with one user name per line, read at each login. A file that cannot be read refuses the login (the log names the file), as vsftpd does, rather than leaving the user's jail undecided. vsftpd's default is /etc/vsftpd.chroot_list (/etc/vsftpd/chroot_list on Red Hat): with chroot_list_enable and this option left at its default, when twinftpd's file does not exist and vsftpd's does, vsftpd's is read; -t and the start warn when such a file exists, saying which one is read.")
CFG_BOOL(allow_writeable_chroot, 0,
	"Allow a chroot directory that the user can write to. Off by default because a writable root lets a user plant files that libraries look up by absolute path.")
CFG_BOOL(userlist_enable, 0,
	"Check the name given to USER against userlist_file, which the session monitor reads at each USER: a refused name gets \"530 Permission denied.\" before any password is asked for, counts as a failed login (max_login_fails), and is checked again at the login. A file that cannot be read refuses every login, whatever userlist_deny says (421, and the session is closed; vsftpd answers \"500 OOPS: cannot read user list file\"); -t reports it. Anonymous names (anonymous, ftp) are looked up too.")
CFG_BOOL(userlist_deny, 1,
	"With userlist_enable: YES denies the users in the list, NO allows only them.")
CFG_STR(userlist_file, "/etc/twinftpd.user_list",
	"File with one user name per line for userlist_enable ('#' starts a comment line). vsftpd's default is /etc/vsftpd.user_list (/etc/vsftpd/user_list on Red Hat): with userlist_enable and this option left at its default, when twinftpd's file does not exist and vsftpd's does, vsftpd's is read (the list the config meant); -t and the start warn when such a file exists, saying which one is read and the line that would choose. Which file is read is decided at start and at each reload: a twinftpd file created later counts from the next reload.")
CFG_BOOL(userlist_log, 0,
	"Red Hat's vsftpd option: with userlist_enable, each login the list refuses is also logged as a failed login (the FAIL LOGIN line of a wrong password, which fail2ban's vsftpd filter counts). Either way the refusal counts towards max_login_fails and is logged as \"user NAME refused by userlist_file\".")
CFG_UINT(delay_failed_login, 1, 0, 60,
	"Seconds to wait before answering a failed login.")
CFG_UINT(delay_successful_login, 0, 0, 60,
	"Seconds to wait before answering a successful login (230), as vsftpd's option of the name. The wait is the session monitor's, after the password was checked. 0: none.")
CFG_UINT(max_login_fails, 3, 1, 100,
	"Failed logins after which the session is closed.")
CFG_BOOL(dirmessage_enable, 0,
	"On entering a directory (CWD, CDUP), show its message_file, if it has one, as the first lines of the 250 reply, and the start directory's as the first lines of the login's 230 (as vsftpd); once per directory and session, at most 4000 bytes, control characters shown as '?'.")
CFG_STR(message_file, ".message",
	"Name of the file dirmessage_enable shows, looked up in the directory entered.")
CFG_STR(banner_file, "",
	"File whose text (at most 4000 bytes) is the greeting, as 220- lines and a last bare 220, instead of ftpd_banner. Read by the listener at start (a missing file stops the start): the process that greets opens no file. Control characters are shown as '?'.")
CFG_STR(ftpd_banner, "",
	"Text of the 220 greeting; empty means \"twinftpd ready\".")
CFG_BOOL(guest_enable, 0,
	"Virtual users: every non-anonymous login that PAM accepts (pam_userdb, pam_pwdfile, or any other module; the name need not exist in the user database) runs as guest_username's uid and gid. The login name stays the session's name: user_sub_token puts it into local_root (and into guest_username's home directory), user_config_dir looks its file up, and the log names it. Without virtual_use_local_privs a guest has anonymous privileges (anon_upload_enable, anon_mkdir_write_enable, anon_other_write_enable, anon_world_readable_only, anon_umask, anon_max_rate, chown_uploads; no SITE CHMOD) and is always chrooted; with it, a local user's, and chroot_local_user and chroot_list_file decide. The directory is local_root, or guest_username's home directory.")
CFG_STR(guest_username, "ftp",
	"The local account whose uid, gid and home directory guest logins (guest_enable) use. It must exist (the start checks), and must not be root.")
CFG_BOOL(virtual_use_local_privs, 0,
	"With guest_enable: guests get a local user's privileges (write_enable alone lets them write, local_umask, local_max_rate, SITE CHMOD) instead of an anonymous user's, and are chrooted only as chroot_local_user says.")
CFG_STR(user_config_dir, "",
	"Directory of per-user configuration files: at each login the session monitor reads the file named after the login name (for an anonymous login: ftp_username), if there is one, and its options replace the server's for that session. A name holding '/', starting with '.' or longer than 255 bytes has no file. The file must be a regular file owned by root and not writable by others. Only options that act after the login are taken (local_root, user_sub_token, anon_root, chroot_local_user, allow_writeable_chroot, guest_username, virtual_use_local_privs, dirmessage_enable, message_file, every option of the permissions group: write_enable, anon_upload_enable, anon_mkdir_write_enable, anon_world_readable_only, anon_other_write_enable, local_umask, anon_umask, file_open_mode, chmod_enable, cmds_allowed, cmds_denied, dirlist_enable, download_enable, ascii_upload_enable, ascii_download_enable, hide_file, deny_file, hide_ids, use_localtime, force_dot_files, delete_failed_uploads, mdtm_write, lock_upload_files, tilde_user_enable; pasv_enable, pasv_min_port, pasv_max_port, pasv_promiscuous, port_enable, port_promiscuous, use_sendfile, local_max_rate, anon_max_rate, force_local_data_ssl, force_anon_data_ssl, the four timeouts, xferlog_enable, log_ftp_protocol); any other option (listening, login, TLS, logging files, sandbox) is ignored with a log line naming the file and line. A file with an error (an unknown option, a bad value, an unreadable file) refuses that login with 530 and a log line. Empty: no per-user files.")

/* --- Privilege separation --- */
CFG_STR(nopriv_user, "nobody",
	"Unprivileged user the pre-login protocol worker runs as.")
CFG_STR(secure_chroot_dir, "/usr/share/empty",
	"Empty directory, not writable by nopriv_user, that the pre-login worker is chrooted to. Created (root-owned, mode 0555) at start when missing.")

/* --- Permissions --- */
CFG_BOOL(write_enable, 0,
	"Allow commands that change the file system: STOR, STOU, APPE, DELE, MKD, RMD, RNFR/RNTO, SITE CHMOD.")
CFG_BOOL(anon_upload_enable, 0,
	"With write_enable, let anonymous users upload files (STOR, STOU).")
CFG_BOOL(anon_mkdir_write_enable, 0,
	"With write_enable, let anonymous users create directories.")
CFG_BOOL(anon_world_readable_only, 1,
	"Anonymous sessions may download only files that anybody may read (mode o+r), whatever the ftp_username account could read.")
CFG_BOOL(anon_other_write_enable, 0,
	"With write_enable, let anonymous users delete, rename, append and remove directories.")
CFG_OCTAL(local_umask, 077, 0777,
	"Umask for files and directories created by local users.")
CFG_OCTAL(anon_umask, 077, 0777,
	"Umask for files and directories created by anonymous users.")
CFG_OCTAL(file_open_mode, 0666, 07777,
	"Mode uploaded files are created with, before the umask.")
CFG_BOOL(chmod_enable, 1,
	"Allow SITE CHMOD to local users (with write_enable); anonymous users never get it.")
CFG_STR(cmds_allowed, "",
	"After login, only these commands (a comma-separated list such as PASV,RETR,QUIT) are allowed; any other gets 550. Empty: no such list. Before the login it does not apply.")
CFG_STR(cmds_denied, "",
	"After login, these commands (a comma-separated list such as DELE,RMD) get 550. Applied after cmds_allowed.")
CFG_BOOL(dirlist_enable, 1,
	"Allow LIST, NLST, MLSD and STAT with a path.")
CFG_BOOL(ls_recurse_enable, 0,
	"Let LIST, NLST and STAT take ls's -R option: the directory, then each subdirectory under a \"path:\" line, as vsftpd lists them (symbolic links to directories are not followed; hide_file, deny_file and -a apply in every directory). A recursive listing of a large tree is work a client asks for with a few bytes, so it is bounded: 32 levels below the directory named, 50000 entries and 30 seconds in all; a listing that reaches a bound stops there, is answered 451 (STAT: its 213 says so) and logged. Without this option -R is ignored, as in vsftpd.")
CFG_BOOL(tilde_user_enable, 0,
	"A path argument \"~user\" or \"~user/rest\" (CWD, RETR, STOR, LIST and NLST after their options, SITE CHMOD and the other commands that take a path) names that user's home directory, as vsftpd resolves it: from the passwd file the session sees, /etc/passwd inside its chroot (a chroot without one resolves no name, as in vsftpd), read as a regular file, its first 4 MB at most (no NSS: a user only a directory service knows does not resolve). A name not found stays a name. The home is a path like any other: in a chroot it names a place inside the chroot, and deny_file and the session's permissions apply to it. \"~\" and \"~/rest\" always name the directory the login started in, with or without this option.")
CFG_BOOL(force_dot_files, 0,
	"Show names that start with a dot in LIST, NLST and STAT listings even when the client did not give ls's -a option (as vsftpd; the entries . and .. are never listed). MLSD lists them always. hide_file still hides what it names.")
CFG_BOOL(delete_failed_uploads, 0,
	"Delete a file that an upload (STOR, STOU, APPE) created when the upload fails: aborted (ABOR), the data connection reset, a timeout, a write error. A file that existed before the upload is left as the failed upload left it. As in vsftpd, a data connection the client closes normally is the end of the file, not a failure. An anonymous session (or a guest with anonymous privileges) deletes only with anon_other_write_enable, since its sandbox has no unlink otherwise: without it the partial file stays.")
CFG_BOOL(mdtm_write, 1,
	"Let MDTM set a file's modification time, as vsftpd: \"MDTM YYYYMMDDHHMMSS path\" (or YYYYMMDD, or with a fraction after the seconds, which is ignored), taken as that form only when the whole argument names no file. The time is UTC (local time with use_localtime); the answer is 213, or 550 for a path that is not a regular file or a time that is not a real one. A path of \"~\" or \"~/...\" after the time is the login's start directory. Needs write_enable, and for anonymous sessions anon_other_write_enable as well; without them such an MDTM gets 550, as in vsftpd (its whole argument names no file). The same right lets MFMT (\"MFMT YYYYMMDDHHMMSS[.fraction] path\", as proftpd and pure-ftpd, used by FileZilla and WinSCP to keep an upload's time) set the modification time, always in UTC, leaving the access time; its answer is \"213 Modify=YYYYMMDDHHMMSS; path\", 501 for a malformed time, 550 without the right. FEAT lists MFMT when mdtm_write and write_enable are on.")
CFG_BOOL(lock_upload_files, 1,
	"Lock files while they are transferred, as vsftpd: an upload holds a write lock on the whole file (taken before it truncates), a download a read lock, so that a download waits for an upload of the same file to end instead of reading it half written, and an upload waits for the downloads under way. Locks of other programs (fcntl) count too. A waiting transfer starts as soon as the lock is released (the kernel queues it; nothing polls), so uploads of one file follow each other without a gap. The wait is bounded: it ends when the client hangs up (seen within a quarter of a second), or after data_connection_timeout seconds (idle_session_timeout when that is 0; an hour at most) with 450 and a log line. A file system that cannot lock does not stop the transfer.")
CFG_BOOL(download_enable, 1,
	"Allow RETR.")
CFG_BOOL(ascii_upload_enable, 0,
	"Convert CRLF to LF on uploads in ASCII mode (TYPE A). When off, ASCII uploads are stored as sent.")
CFG_BOOL(ascii_download_enable, 0,
	"Convert LF to CRLF on downloads in ASCII mode. When off, ASCII downloads are sent as stored.")
CFG_STR(hide_file, "",
	"Names left out of LIST, NLST, MLSD and STAT listings, as vsftpd's filter: {*.mp3,*.mov,.private} (braces optional; patterns separated by commas; '*' matches any run of characters, a leading dot too, '?' any one character; case matters). Only the last component, the entry's own name, is matched. A hidden file stays reachable by its name. Empty: nothing hidden.")
CFG_STR(deny_file, "",
	"Names no command may touch, in hide_file's syntax: a command whose path has any component (other than . and ..) matching a pattern, such as RETR, STOR, DELE, RNFR, RNTO, MKD, RMD, CWD, SIZE, MDTM, MLST, LIST or SITE CHMOD, gets 550 (\"Permission denied.\"), so a denied directory denies everything under it; STOU passes over the names it would pick that are denied. The names are matched as the client wrote them, not the file they lead to: a symbolic link with another name is not denied (as in vsftpd). Denied names still appear in listings unless hide_file hides them too. Empty: nothing denied.")
CFG_BOOL(hide_ids, 0,
	"Show every owner and group in listings as \"ftp\".")
CFG_BOOL(text_userdb_names, 0,
	"Show owners and groups in LIST and STAT listings by name instead of by number (the default, as in vsftpd, where names cost a lookup per line). The names come from the user database as the listener enumerates it at start and at each reload (getpwent, getgrent: at most 4096 users and 4096 groups; a directory service that does not enumerate gives none), since a session process is chrooted and cannot ask it; an id without a name there, and a name longer than 32 bytes or holding a blank, stays a number. hide_ids wins.")
CFG_BOOL(use_localtime, 0,
	"Show times in listings and MDTM in local time rather than UTC.")
CFG_BOOL(chown_uploads, 0,
	"Files that anonymous sessions (and guests without virtual_use_local_privs) create by upload (STOR, STOU, APPE of a new file) are given to chown_username, with mode chown_upload_mode, as soon as they are created: the uploader keeps writing through its open descriptor but cannot read, change or delete the file by name afterwards. The session monitor does it on the worker's request for the descriptor of that file (it keeps CAP_CHOWN after the login only with this option), and refuses any descriptor that is not a new, empty regular file of the session's own user opened for writing.")
CFG_STR(chown_username, "root",
	"Owner of anonymous uploads with chown_uploads; it must exist (the start checks). The group is left as it is.")
CFG_OCTAL(chown_upload_mode, 0600, 0777,
	"Mode of anonymous uploads with chown_uploads (no set-id bits).")

/* --- Data connections --- */
CFG_BOOL(pasv_enable, 1,
	"Allow PASV and EPSV.")
CFG_UINT(pasv_min_port, 0, 0, 65535,
	"Lowest passive port. With both pasv_min_port and pasv_max_port 0, any port the kernel picks; otherwise, as vsftpd reads them, a lowest port of 1024 or less (or 0) is 1024, and a highest port of 0, 65535 or below the lowest is 65535 (-t and the start say so).")
CFG_UINT(pasv_max_port, 0, 0, 65535,
	"Highest passive port (see pasv_min_port). Set below pasv_min_port and above 1024, the two bound the range the other way round, pasv_max_port to pasv_min_port (vsftpd would run from pasv_min_port to 65535; -t and the start say so).")
CFG_STR(pasv_address, "",
	"IPv4 address to announce in the 227 reply, for servers behind NAT; empty means the control connection's local address. A host name here is resolved as with pasv_addr_resolve=YES, with a warning at -t and start (vsftpd starts with one but ends each session at PASV).")
CFG_BOOL(pasv_addr_resolve, 0,
	"pasv_address is a host name: the listener resolves it (IPv4) at start and at each reload, and PASV announces the address it had then. A name that does not resolve (DNS not up yet at boot, say) is a warning, at -t and in the log: PASV then announces the address each client connected to, until a reload resolves it. Without pasv_address it changes nothing, as in vsftpd, and -t and the start say so.")
CFG_BOOL(pasv_promiscuous, 0,
	"Accept passive data connections from any address, not only the control connection's peer. Leave off: it lets a third party take over a transfer.")
CFG_BOOL(port_enable, 1,
	"Allow PORT and EPRT.")
CFG_BOOL(port_promiscuous, 0,
	"Let PORT and EPRT name any address and port (FTP bounce). Leave off.")
CFG_BOOL(connect_from_port_20, 0,
	"Make active data connections from port ftp_data_port (needs the monitor's CAP_NET_BIND_SERVICE).")
CFG_UINT(ftp_data_port, 20, 1, 65535,
	"Source port of active data connections with connect_from_port_20.")
CFG_BOOL(use_sendfile, 1,
	"Send binary downloads with sendfile(2).")
CFG_UINT(local_max_rate, 0, 0, 2147483647,
	"Most bytes per second a local user's download (RETR) or upload (STOR, APPE, STOU) moves, on average over the transfer (a client that stalls for more than a second earns no burst above the rate afterwards); each session is limited alone. Listings are not limited. The transfer moves in chunks of about a quarter of a second's worth and pauses between them, still answering ABOR. 0 means no limit.")
CFG_UINT(anon_max_rate, 0, 0, 2147483647,
	"As local_max_rate, for anonymous sessions.")
CFG_UINT(trans_chunk_size, 0, 0, 2147483647,
	"Most bytes a rate-limited transfer (local_max_rate, anon_max_rate) moves between two of its pauses: smaller pieces make the rate smoother (vsftpd suggests 8192). As in vsftpd, a value below 4096 counts as 4096 and one of 65536 or more as 65536. 0: a quarter of a second's worth of the rate. A transfer without a rate limit moves as much as the socket takes, whatever this says.")

/* --- TLS (FTPS, RFC 4217) --- */
CFG_BOOL(ssl_enable, 0,
	"Offer TLS on the control and data connections (AUTH TLS, PBSZ, PROT). Needs rsa_cert_file. TLS 1.2 and 1.3 only; a client that offers ALPN without \"ftp\" is refused in the handshake.")
CFG_BOOL(implicit_ssl, 0,
	"Implicit FTPS: every connection to listen_port starts with a TLS handshake (as ftps:// clients expect, usually on port 990), and AUTH is refused. Needs ssl_enable.")
CFG_UINT(implicit_ssl_port, 0, 0, 65535,
	"A second port on which the same server speaks implicit FTPS, while listen_port stays explicit (AUTH TLS); 0: none. Standalone mode only; needs ssl_enable, and implicit_ssl=NO.")
CFG_STR(rsa_cert_file, "/etc/ssl/private/twinftpd.pem",
	"PEM file with the server certificate, followed by any intermediate certificates (and its private key when rsa_private_key_file is unset). Read by the listener at start, as root.")
CFG_STR(rsa_private_key_file, "",
	"PEM file with the certificate's private key; empty: the key is in rsa_cert_file. Read by the listener at start, as root, before any session process exists; see require_ssl_reuse for the processes that hold it.")
CFG_STR(ca_certs_file, "",
	"PEM file of certificate authorities whose client certificates are accepted with validate_cert or require_cert; also sent as the list of acceptable authorities when ssl_request_cert asks for a client certificate.")
CFG_STR(ssl_ciphers, "ECDHE+AES128+AESGCM:ECDHE+AESGCM:ECDHE+CHACHA20",
	"OpenSSL cipher list for TLS 1.2, in the server's order of preference (TLS 1.3 suites: AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, in that order). vsftpd's default (DES-CBC3-SHA) is broken; this one has forward secrecy and authenticated encryption only, the fastest first.")
CFG_STR(dh_param_file, "",
	"Red Hat's vsftpd option: PEM file of Diffie-Hellman parameters (openssl dhparam, or genpkey -genparam -algorithm DH) for the TLS 1.2 DHE suites of ssl_ciphers; read at start and reload. Empty: no DHE suite is used (the default ssl_ciphers names none; ECDHE serves).")
CFG_STR(ecdh_param_file, "",
	"Red Hat's vsftpd option: PEM file of EC parameters naming a curve (openssl ecparam -name secp384r1): the only group offered for key exchange (ECDHE in TLS 1.2, key share in TLS 1.3); read at start and reload. Empty: OpenSSL's default groups, X25519 first.")
CFG_BOOL(ssl_tlsv1_2, 1,
	"Offer TLS 1.2.")
CFG_BOOL(ssl_tlsv1_3, 1,
	"Offer TLS 1.3.")
CFG_BOOL(ssl_tlsv1, 0,
	"Accepted for vsftpd.conf files; TLS 1.0 is never offered (twinftpd speaks TLS 1.2 and 1.3 only), and YES is reported by -t and at start as a setting that is ignored. vsftpd's default is YES.")
CFG_BOOL(ssl_tlsv1_1, 0,
	"As ssl_tlsv1, for TLS 1.1: never offered.")
CFG_BOOL(ssl_sslv2, 0,
	"As ssl_tlsv1, for SSL 2: never offered.")
CFG_BOOL(ssl_sslv3, 0,
	"As ssl_tlsv1, for SSL 3: never offered.")
CFG_BOOL(allow_anon_ssl, 0,
	"Let anonymous sessions use TLS (AUTH TLS from a client that then logs in anonymously). When off, an anonymous login over TLS is refused with 530.")
CFG_BOOL(force_local_logins_ssl, 1,
	"With ssl_enable: local users must switch to TLS before USER/PASS (else 530).")
CFG_BOOL(force_local_data_ssl, 1,
	"With ssl_enable: local users must protect data connections (PROT P; else 521).")
CFG_BOOL(force_anon_logins_ssl, 0,
	"With ssl_enable and allow_anon_ssl: anonymous users must log in over TLS.")
CFG_BOOL(force_anon_data_ssl, 0,
	"With ssl_enable and allow_anon_ssl: anonymous users must protect data connections.")
CFG_BOOL(require_ssl_reuse, 1,
	"A TLS data connection must resume the control connection's TLS session (RFC 4217 section 10.2: proof that the same client opens it); a fresh handshake is refused with 522. Resumption needs only the session ticket key the session was started with, so the process that runs as the logged-in user never holds the certificate's private key. With NO, that process loads the key to make full handshakes, as in vsftpd.")
CFG_BOOL(ssl_request_cert, 0,
	"Ask the client for a certificate in the control handshake (not required unless require_cert). vsftpd's default is YES, which makes some clients prompt their user for a certificate.")
CFG_BOOL(require_cert, 0,
	"Refuse a control handshake without a client certificate (implies ssl_request_cert).")
CFG_BOOL(validate_cert, 0,
	"Refuse a client certificate that does not verify against ca_certs_file.")
CFG_BOOL(strict_ssl_read_eof, 1,
	"A TLS upload must end with the client's TLS close_notify: an upload whose connection simply closes (a truncation an attacker can cause) is answered 426 and logged. vsftpd's default is NO.")
CFG_BOOL(strict_ssl_write_shutdown, 0,
	"After a TLS download, wait (up to data_connection_timeout) for the client's close_notify before answering 226. The server always sends its own close_notify.")
CFG_BOOL(ssl_strict_sni, 0,
	"Refuse a TLS handshake whose server name (SNI) is not a name of the certificate (subject alternative names, or the common name). A client that sends no name is accepted.")
CFG_BOOL(debug_ssl, 0,
	"Log TLS handshake failures and alerts with OpenSSL's reason.")

/* --- Timeouts (seconds; 0 disables) --- */
CFG_UINT(idle_session_timeout, 300, 0, 86400,
	"Close a session that sends no command for this long.")
CFG_UINT(data_connection_timeout, 300, 0, 86400,
	"Abort a transfer that makes no progress for this long.")
CFG_UINT(accept_timeout, 60, 0, 86400,
	"How long a passive data connection may take to arrive.")
CFG_UINT(connect_timeout, 60, 0, 86400,
	"How long an active data connection may take to connect.")

/* --- Logging --- */
CFG_BOOL(xferlog_enable, 1,
	"Log one line per transfer (and per MKD, RMD, DELE, RNTO, SITE CHMOD). Logins, failed logins, refused connections and sandbox events are logged whatever this says.")
CFG_STR(log_file, "/var/log/twinftpd.log",
	"File the log lines go to (opened by the listener before any session starts). vsftpd_log_file is accepted as another name for it.")
CFG_BOOL(xferlog_std_format, 0,
	"Write each upload and download (with xferlog_enable) to xferlog_file in the standard xferlog(5) format of wu-ftpd, which transfer-statistics tools read, instead of as a line of log_file (which keeps every other line). A file name's blanks and control characters are written as '_', so that every line has its 14 fields; an anonymous user is named by the login name given (anonymous or ftp), not by the password.")
CFG_STR(xferlog_file, "/var/log/xferlog",
	"File of the xferlog(5) lines (xferlog_std_format or dual_log_enable), opened by the listener at start.")
CFG_BOOL(dual_log_enable, 0,
	"With xferlog_enable: each transfer goes both to xferlog_file, in xferlog(5) format, and to log_file as a line of its own.")
CFG_BOOL(log_ftp_protocol, 0,
	"Log every command and reply of every session (\"FTP command: Client ...\", \"FTP response: Client ...\"), passwords masked: for debugging; it logs file names and user names as clients send them.")
CFG_BOOL(syslog_enable, 0,
	"Send log lines to syslog (facility ftp, through /dev/log) instead of log_file. Each line is sent to the path /dev/log, by the listener (the log writer, which writes a logged-in session's lines) or by a session's monitor before its login, so a syslog daemon that starts after twinftpd, or restarts, gets the next line; with none listening at start the start goes on and warns (as vsftpd's syslog(3) would drop the lines), and the lines until one listens are lost. A daemon that stops reading, or falls behind a burst (its socket's queue of net.unix.max_dgram_qlen lines is full), costs lines, never a wait: a line that finds no room is lost, and the next line the same process sends is preceded by one that says how many it lost.")

/* --- Sandbox --- */
CFG_BOOL(seccomp_sandbox, 1,
	"Run every session process under its seccomp policy, and refuse to start where the kernel cannot install one. NO does not turn the policies off: it lets the server start without them only where the kernel takes no filter (with a warning). vsftpd.conf files set NO to work around vsftpd's own filter (a third of 141 public ones do), which says nothing about twinftpd's; seccomp_log_only is the debugging switch.")
CFG_BOOL(isolate_network, 1,
	"Put every protocol worker in an empty network namespace (shared by all workers, created once at start): it cannot open any network connection, and every data socket (PASV listen, PORT connect) is made by the session monitor, which pins the peer to the control connection's client. A session whose PASVs come less than a second apart (a mirror, a download manager) asks its monitor for the next PASV socket right after each 227, so the next PASV answers without waiting for the monitor; the worker closes that socket when a second has passed without the PASV to take it (at the end of a transfer that lasted longer), and turns away whatever connected to it before its PASV. With a pasv range of fewer than 1000 ports (pasv_min_port, pasv_max_port) it does not: such a session holds two ports of the range at a time. Where the kernel refuses namespaces (containers) the daemon says so once at start and runs without.")
CFG_BOOL(isolate, 0,
	"Give every protocol worker its own PID and IPC namespaces, so it can see and signal no other process. Costs a namespace set-up per worker (about a tenth of a millisecond each on login).")
CFG_BOOL(seccomp_log_only, 0,
	"Debugging switch for a libc or kernel the policies have not met yet: a forbidden system call is allowed and logged by the kernel (an audit record of type SECCOMP, type=1326, with syscall=NUMBER, in the audit log or dmesg) instead of killing the session; \"ausyscall NUMBER\" names it. Never leave it on in production.")
