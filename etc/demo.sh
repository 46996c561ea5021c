#!/bin/sh
# Installs what is missing, builds twinftpd and starts it on port 2121 with
# a ready demo config: anonymous read-only access to /srv/twinftpd-demo and
# local users through PAM (service "twinftpd"). Run as root from the repo.
set -eu
cd "$(dirname "$0")/.."
etc/install-deps.sh
[ -d build ] || meson setup build
meson compile -C build
# Anonymous sessions run as "ftp"; create it like Debian's vsftpd package does.
id ftp >/dev/null 2>&1 || useradd --system --home-dir /srv/twinftpd-demo --no-create-home \
	--shell /usr/sbin/nologin ftp
mkdir -p /srv/twinftpd-demo/pub
[ -f /srv/twinftpd-demo/pub/README ] || echo "Hello from twinftpd." > /srv/twinftpd-demo/pub/README
chown root:root /srv/twinftpd-demo && chmod 0755 /srv/twinftpd-demo
[ -f /etc/pam.d/twinftpd ] || install -m 0644 etc/twinftpd.pam /etc/pam.d/twinftpd
if [ -f /run/twinftpd-demo.pid ] && kill -0 "$(cat /run/twinftpd-demo.pid)" 2>/dev/null; then
	kill "$(cat /run/twinftpd-demo.pid)"; sleep 1
fi
# FTPS with a self-signed certificate (clients need -k / no verification).
cert=/etc/ssl/private/twinftpd-demo.pem
if [ ! -s "$cert" ]; then
	mkdir -p /etc/ssl/private
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
		-subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
		-keyout "$cert.key" -out "$cert.crt" 2>/dev/null
	cat "$cert.crt" "$cert.key" > "$cert" && rm -f "$cert.crt" "$cert.key"
	chmod 600 "$cert"
fi
build/twinftpd -o listen_port=2121 -o anonymous_enable=YES -o anon_root=/srv/twinftpd-demo \
	-o pasv_min_port=40000 -o pasv_max_port=40100 -o background=NO \
	-o ssl_enable=YES -o rsa_cert_file="$cert" -o allow_anon_ssl=YES -o implicit_ssl_port=2990 \
	etc/twinftpd.conf </dev/null >/var/log/twinftpd-demo.out 2>&1 &
echo $! > /run/twinftpd-demo.pid
sleep 0.5
kill -0 "$(cat /run/twinftpd-demo.pid)"
echo "twinftpd is running on port 2121 (pid $(cat /run/twinftpd-demo.pid)); log: /var/log/twinftpd.log"
echo "try: curl ftp://127.0.0.1:2121/pub/README    or: lftp -u youruser 127.0.0.1 -p 2121"
echo "FTPS: curl --ssl-reqd -k ftp://127.0.0.1:2121/pub/README    or implicit: curl -k ftps://127.0.0.1:2990/pub/README"
