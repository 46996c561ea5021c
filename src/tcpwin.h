/*
 * What a TCP connection's peer window takes now (TCP_INFO), apart from
 * <netinet/tcp.h>: glibc's struct tcp_info there lacks the fields the
 * kernel's <linux/tcp.h> has, and the two headers do not mix.
 */
#ifndef TW_TCPWIN_H
#define TW_TCPWIN_H

/*
 * Bytes the peer's advertised window has room for beyond what is in
 * flight and queued unsent, 0 if none; -1 if the kernel does not say
 * (TCP_INFO without tcpi_snd_wnd, before Linux 5.4).
 */
long long tw_tcp_window_room(int fd);

#endif
