#include "src/common/sdnotify.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int notify_fd = -1;

void
sdnotify_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	socklen_t len;
	size_t plen;
	int fd;

	if (path == NULL)
		return;
	plen = strlen(path);
	/* "@name" is an abstract socket: a NUL in place of the '@'. */
	if (plen < 2 || plen >= sizeof(sun.sun_path) || (path[0] != '/' && path[0] != '@'))
		goto out;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto out;
	/* Connected now: under the listener's filter a send needs no address. */
	if (connect(fd, (struct sockaddr *)&sun, len) != 0) {
		close(fd);
		goto out;
	}
	notify_fd = fd;
out:
	unsetenv("NOTIFY_SOCKET");
}

void
sdnotify(const char *state)
{
	if (notify_fd >= 0)
		(void)!send(notify_fd, state, strlen(state), MSG_NOSIGNAL);
}

void
sdnotify_ready(void)
{
	char msg[64];

	(void)snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%d", (int)getpid());
	sdnotify(msg);
}

void
sdnotify_reloading(void)
{
	struct timespec ts;
	char msg[80];

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		ts.tv_sec = ts.tv_nsec = 0;
	(void)snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		       (unsigned long long)ts.tv_sec * 1000000ULL +
		       (unsigned long long)ts.tv_nsec / 1000ULL);
	sdnotify(msg);
}

int
sdnotify_fd(void)
{
	return notify_fd;
}

void
sdnotify_close(void)
{
	if (notify_fd >= 0)
		close(notify_fd);
	notify_fd = -1;
}
