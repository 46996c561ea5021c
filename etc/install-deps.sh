#!/bin/sh
# Installs what building, running and testing twinftpd needs (Debian 12),
# and building its package (etc/build-deb.sh).
# Safe to run again: apt-get only installs what is missing.
set -eu
PKGS="meson ninja-build gcc pkg-config libcap-dev libseccomp-dev libpam0g-dev libwrap0-dev \
libssl-dev libpam-modules python3 python3-pytest lftp curl \
libpam-wrapper libnss-wrapper iproute2 procps openssl python3-cryptography \
systemd openbsd-inetd libwrap0 libtirpc3 logrotate vsftpd fail2ban \
python3-pyftpdlib python3-openssl haproxy libpam-pwdfile clang strace \
build-essential debhelper dpkg-dev lintian libcrypt-dev \
busybox ncftp tnftp wget wput"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# Installed for tests and benchmarks, never to run as services (vsftpd
	# would take port 21, fail2ban and inetd start daemons): policy-rc.d
	# tells the packages' scripts not to start them.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' > "$policy"
		chmod 755 "$policy"
	fi
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing || {
		[ -z "$policy" ] || rm -f "$policy"
		exit 1
	}
	[ -z "$policy" ] || rm -f "$policy"
fi

# xinetd conflicts with openbsd-inetd (both provide inet-superserver), so
# the xinetd test runs a private copy, unpacked and not installed (its
# libraries are in PKGS), where tests/e2e/test_inetd.py looks for it.
# Neither super-server is started here.
XINETD_ROOT=/opt/twinftpd-test/xinetd
if [ ! -x "$XINETD_ROOT/usr/sbin/xinetd" ]; then
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt-get download writes as _apt
	(cd "$tmp" && apt-get download xinetd >/dev/null)
	mkdir -p "$XINETD_ROOT"
	dpkg-deb -x "$tmp"/xinetd_*.deb "$XINETD_ROOT"
	rm -rf "$tmp"
fi
