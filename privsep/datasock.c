/*
 * Data sockets: a passive listener in the pasv port range and an active
 * connection to a checked address. The worker makes its own; with
 * isolate_network (an empty network namespace for workers) or a port-20
 * connection, its monitor makes them and hands them over (monitor.c).
 * Neither function checks who may connect or be connected to: that is the
 * caller's rule (pasv_promiscuous, port_promiscuous, the bounce check).
 */
#include "privsep/datasock.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/common/config.h"
#include "src/common/monotime.h"
#include "src/common/sockaddr.h"

static unsigned
pick_random(unsigned n)
{
	static unsigned long long state;

	if (state == 0)
		state = ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid() ^
			0x9e3779b97f4a7c15ULL;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (unsigned)(state % n);
}

/*
 * A listening socket on local's address with a port from the pasv range.
 * Used by the worker, and by the monitor for an isolated worker.
 */
int
datasock_pasv_listen(const struct tw_config *c, const struct sockaddr_storage *local,
		 unsigned *port_out)
{
	struct sockaddr_storage addr = *local;
	unsigned lo, hi, span, start, i;
	int fd = -1;

	config_pasv_range(c, &lo, &hi);
	span = hi - lo + 1;
	start = lo == 0 ? 0 : pick_random(span);
	for (i = 0; i < span; i++) {
		unsigned port = lo == 0 ? 0 : lo + (start + i) % span;
		int one = 1;

		fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return -1;
		/*
		 * Every finished transfer leaves its port in TIME_WAIT for a
		 * minute; without this a busy client exhausts a small pasv
		 * port range. It also lets two sessions bind the same port
		 * until one listens: the other's listen() then fails with
		 * EADDRINUSE, and it takes the next port, on a new socket.
		 */
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
			close(fd);
			return -1;
		}
		sa_set_port(&addr, port);
		if (bind(fd, (struct sockaddr *)&addr, sa_len(&addr)) == 0 &&
		    listen(fd, 1) == 0)
			break;
		if (errno != EADDRINUSE) {
			close(fd);
			return -1;
		}
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return -1;
	/* Without a range the kernel chose the port: asked for here. */
	if (lo == 0) {
		socklen_t len = sizeof(addr);

		if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
			close(fd);
			return -1;
		}
	}
	*port_out = sa_port(&addr);
	return fd;
}

/* An interrupted poll resumes with what is left of the deadline, not all of it. */
int
datasock_wait(int fd, short events, unsigned timeout_s)
{
	struct pollfd p = { fd, events, 0 };
	long long end = timeout_s != 0 ? tw_mono_ms() + (long long)timeout_s * 1000 : 0;
	int rc, ms = -1;

	do {
		if (timeout_s != 0) {
			long long left = end - tw_mono_ms();

			ms = left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
		}
		rc = poll(&p, 1, ms);
	} while (rc < 0 && errno == EINTR);
	return rc;
}

/*
 * A non-blocking TCP connection to dst, leaving from local's address.
 * Used by the worker, and by the monitor for an isolated worker.
 */
int
datasock_connect(const struct sockaddr_storage *dst, const struct sockaddr_storage *local,
		    unsigned timeout_s)
{
	struct sockaddr_storage src = *local;
	int fd, soerr = 0;
	socklen_t len = sizeof(soerr);

	fd = socket(dst->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* Leave from the address the client talks to, when families match. */
	if (src.ss_family == dst->ss_family) {
		sa_set_port(&src, 0);
		(void)bind(fd, (struct sockaddr *)&src, sa_len(&src));
	}
	if (connect(fd, (const struct sockaddr *)dst, sa_len(dst)) != 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	if (datasock_wait(fd, POLLOUT, timeout_s) <= 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
		close(fd);
		return -1;
	}
	return fd;
}
