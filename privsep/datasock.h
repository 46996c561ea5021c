#ifndef TW_DATASOCK_H
#define TW_DATASOCK_H

#include <sys/socket.h>

struct tw_config;

/*
 * A non-blocking listening socket on local's address with a port from the
 * pasv range (any port when the range is unset); the port in *port_out.
 * -1 with errno on failure.
 */
int datasock_pasv_listen(const struct tw_config *c, const struct sockaddr_storage *local,
			 unsigned *port_out);

/*
 * A non-blocking TCP connection to dst, leaving from local's address when
 * the families match; waits at most timeout_s (0: forever). -1 on failure.
 */
int datasock_connect(const struct sockaddr_storage *dst, const struct sockaddr_storage *local,
		     unsigned timeout_s);

/* poll(2) for events on fd, at most timeout_s (0: forever), through
 * EINTR. Like poll: > 0 ready, 0 timed out, < 0 error. */
int datasock_wait(int fd, short events, unsigned timeout_s);

#endif
