"""pyftpdlib for bench/compare, run with Debian's /usr/bin/python3.

usage: pyftpdlib_server.py PORT PASV_MIN PASV_MAX USER PASSWORD HOME ANON_DIR [PEM]

With PEM (certificate and key, bench/compare --tls): TLS_FTPHandler
(pyOpenSSL), TLS required on the control and the data connections; the
key is loaded before the drop to the test user, as the other servers do.

Its own authorizer (DummyAuthorizer: the password in memory, no hash),
no connection limits (max_cons=0), the fd limit raised to the hard limit
before dropping to the test user, sendfile() on (the default).
"""
import logging
import os
import pwd
import resource
import sys

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler
from pyftpdlib.servers import FTPServer


def main():
    port, pmin, pmax = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    user, password, home, anon = sys.argv[4:8]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    auth = DummyAuthorizer()
    auth.add_user(user, password, home, perm="elradfmwMT")
    auth.add_anonymous(anon)
    handler = FTPHandler
    if len(sys.argv) > 8:
        from pyftpdlib.handlers import TLS_FTPHandler
        handler = TLS_FTPHandler
        handler.certfile = sys.argv[8]
        handler.tls_control_required = True
        handler.tls_data_required = True
        handler.get_ssl_context()
    handler.authorizer = auth
    handler.passive_ports = range(pmin, pmax + 1)
    handler.timeout = 600
    handler.banner = "pyftpdlib ready"
    logging.basicConfig(level=logging.WARNING)
    server = FTPServer(("127.0.0.1", port), handler)
    server.max_cons = 0
    server.max_cons_per_ip = 0
    pw = pwd.getpwnam(user)
    if os.getuid() == 0:
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    server.serve_forever(handle_exit=True)


if __name__ == "__main__":
    main()
