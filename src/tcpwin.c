/* tw_tcp_window_room: see tcpwin.h. */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "src/tcpwin.h"

long long
tw_tcp_window_room(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	unsigned long long sent, flight;
	long long room;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_snd_wnd) + sizeof(ti.tcpi_snd_wnd))
		return -1;
	/* bytes_sent counts a retransmitted byte again. */
	sent = ti.tcpi_bytes_sent - ti.tcpi_bytes_retrans;
	flight = sent > ti.tcpi_bytes_acked ? sent - ti.tcpi_bytes_acked : 0;
	room = (long long)ti.tcpi_snd_wnd - (long long)flight - (long long)ti.tcpi_notsent_bytes;
	return room > 0 ? room : 0;
}
