/*
 * The pure half of the IPC: message schemas, the bounded payload writer,
 * typed getters and the datagram codec. No I/O and no process state, so
 * it is unit-tested and fuzzed on its own (tests/unit/test_ipc.c,
 * tests/fuzz/fuzz_ipc.c).
 *
 * The monitor runs as root and decodes what a possibly compromised worker
 * sends, so every length here is checked before it is used, and integers
 * are assembled byte by byte: the wire format never depends on the host's
 * endianness or alignment.
 */
#include "privsep/ipc.h"

#include <string.h>

const struct ipc_schema ipc_schemas[IPC_TYPE_COUNT] = {
	[IPC_NONE] = { "NONE", IPC_FD_NEVER, 0 },
	[IPC_LOGIN] = { "LOGIN", IPC_FD_NEVER,
	    4 + IPC_MAX_USER + 4 + IPC_MAX_PASS + 4 },
	[IPC_LOG] = { "LOG", IPC_FD_NEVER, 4 + 4 + IPC_MAX_LOGMSG },
	[IPC_PORT20_CONNECT] = { "PORT20_CONNECT", IPC_FD_NEVER, 4 },
	[IPC_PASV_LISTEN] = { "PASV_LISTEN", IPC_FD_NEVER, 0 },
	[IPC_PORT_CONNECT] = { "PORT_CONNECT", IPC_FD_NEVER, 4 + 16 + 4 },
	[IPC_LOGIN_RESULT] = { "LOGIN_RESULT", IPC_FD_OPTIONAL, 4 },
	[IPC_FD_RESULT] = { "FD_RESULT", IPC_FD_OPTIONAL, 4 },
	[IPC_CLIENT_FD] = { "CLIENT_FD", IPC_FD_ALWAYS, 0 },
	[IPC_CLIENT_ACK] = { "CLIENT_ACK", IPC_FD_NEVER, 0 },
	[IPC_TLS_ON] = { "TLS_ON", IPC_FD_NEVER, 0 },
	[IPC_SANDBOX_VIOLATION] = { "SANDBOX_VIOLATION", IPC_FD_NEVER, 4 + 4 },
	[IPC_XFERLOG] = { "XFERLOG", IPC_FD_NEVER, 4 * 4 + 4 + IPC_MAX_XFERPATH },
	[IPC_PROXY_CLIENT] = { "PROXY_CLIENT", IPC_FD_NEVER, 4 + 16 + 4 },
	[IPC_PROXY_OK] = { "PROXY_OK", IPC_FD_NEVER, 0 },
	[IPC_CHOWN_UPLOAD] = { "CHOWN_UPLOAD", IPC_FD_ALWAYS, 0 },
	[IPC_CHOWN_RESULT] = { "CHOWN_RESULT", IPC_FD_NEVER, 4 },
	[IPC_USER_CHECK] = { "USER_CHECK", IPC_FD_NEVER, 4 + IPC_MAX_USER },
	[IPC_USER_AHEAD] = { "USER_AHEAD", IPC_FD_NEVER, 4 + IPC_MAX_USER },
};

/* Every schema must fit the transport; checked where the table is. */
_Static_assert(4 + IPC_MAX_USER + 4 + IPC_MAX_PASS <= IPC_MAX_PAYLOAD,
    "LOGIN payload exceeds IPC_MAX_PAYLOAD");
_Static_assert(4 + 4 + IPC_MAX_LOGMSG <= IPC_MAX_PAYLOAD,
    "LOG payload exceeds IPC_MAX_PAYLOAD");

const char *
ipc_strerror(int err)
{
	switch (err) {
	case IPC_OK:
		return "success";
	case IPC_E_SHORT:
		return "message shorter than its header or declared length";
	case IPC_E_LONG:
		return "message longer than declared or allowed";
	case IPC_E_TYPE:
		return "unknown message type";
	case IPC_E_FD:
		return "file descriptor missing, unexpected or truncated";
	case IPC_E_EOF:
		return "peer closed the channel";
	case IPC_E_IO:
		return "socket I/O error";
	case IPC_E_FIELD:
		return "payload field absent, too long or malformed";
	case IPC_E_RESERVED:
		return "reserved header bits set";
	case IPC_E_EMPTY:
		return "empty message from a peer still connected";
	}
	return "unknown IPC error";
}

static void
put_le16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)(v >> 8);
}

static void
put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)((v >> 8) & 0xff);
	p[2] = (unsigned char)((v >> 16) & 0xff);
	p[3] = (unsigned char)(v >> 24);
}

static uint16_t
get_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) |
	    ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static int
type_valid(uint32_t type)
{
	return type > IPC_NONE && type < IPC_TYPE_COUNT;
}

void
ipc_init(struct ipc_msg *m, enum ipc_type type)
{
	/* The payload is not cleared: only the first len bytes are ever sent. */
	m->type = (uint16_t)type;
	m->len = 0;
	m->rpos = 0;
	m->fd = -1;
	m->overflow = 0;
}

/* Room for n more payload bytes? Otherwise the message is poisoned. */
static int
put_room(struct ipc_msg *m, size_t n)
{
	if (m->overflow || m->len > IPC_MAX_PAYLOAD ||
	    n > IPC_MAX_PAYLOAD - m->len) {
		m->overflow = 1;
		return 0;
	}
	return 1;
}

void
ipc_put_u32(struct ipc_msg *m, uint32_t v)
{
	if (!put_room(m, 4))
		return;
	put_le32(m->payload + m->len, v);
	m->len += 4;
}

void
ipc_put_str(struct ipc_msg *m, const char *s, size_t len)
{
	/* Bound len first so that 4 + len cannot wrap. */
	if (len > IPC_MAX_PAYLOAD) {
		m->overflow = 1;
		return;
	}
	if (!put_room(m, 4 + len))
		return;
	put_le32(m->payload + m->len, (uint32_t)len);
	if (len > 0)
		memcpy(m->payload + m->len + 4, s, len);
	m->len += 4 + (uint32_t)len;
}

/* Payload bytes not yet consumed; 0 for a corrupted cursor. */
static uint32_t
get_left(const struct ipc_msg *m)
{
	if (m->len > IPC_MAX_PAYLOAD || m->rpos > m->len)
		return 0;
	return m->len - m->rpos;
}

int
ipc_get_u32(struct ipc_msg *m, uint32_t *out)
{
	if (get_left(m) < 4)
		return IPC_E_FIELD;
	*out = get_le32(m->payload + m->rpos);
	m->rpos += 4;
	return IPC_OK;
}

int
ipc_get_str(struct ipc_msg *m, char *buf, size_t bufsz, size_t maxlen,
    size_t *lenout)
{
	uint32_t left = get_left(m), n;
	const unsigned char *p;

	if (left < 4)
		return IPC_E_FIELD;
	p = m->payload + m->rpos;
	n = get_le32(p);
	if (n > maxlen || n >= bufsz || n > left - 4)
		return IPC_E_FIELD;
	/* A NUL inside would let "alice\0..." pass checks as "alice". */
	if (n > 0 && memchr(p + 4, '\0', n) != NULL)
		return IPC_E_FIELD;
	memcpy(buf, p + 4, n);
	buf[n] = '\0';
	if (lenout != NULL)
		*lenout = n;
	m->rpos += 4 + n;
	return IPC_OK;
}

int
ipc_get_end(const struct ipc_msg *m)
{
	return m->rpos == m->len ? IPC_OK : IPC_E_LONG;
}

int
ipc_check_fd_result(const struct ipc_msg *m, uint32_t err)
{
	if (m->type != IPC_FD_RESULT)
		return IPC_E_TYPE;
	if ((err == 0) != (m->fd >= 0))
		return IPC_E_FD;
	return IPC_OK;
}

int
ipc_encode(const struct ipc_msg *m, unsigned char *buf, size_t cap)
{
	if (!type_valid(m->type))
		return IPC_E_TYPE;
	if (m->overflow || m->len > ipc_schemas[m->type].max_payload)
		return IPC_E_LONG;
	if (cap < IPC_HDR_LEN || cap - IPC_HDR_LEN < m->len)
		return IPC_E_LONG;
	put_le16(buf, m->type);
	put_le16(buf + 2, 0);
	put_le32(buf + 4, m->len);
	memcpy(buf + IPC_HDR_LEN, m->payload, m->len);
	return (int)(IPC_HDR_LEN + m->len);
}

int
ipc_decode(const unsigned char *buf, size_t n, int has_fd, struct ipc_msg *m)
{
	const struct ipc_schema *s;
	uint16_t type;
	uint32_t len;

	if (n < IPC_HDR_LEN)
		return IPC_E_SHORT;
	type = get_le16(buf);
	if (!type_valid(type))
		return IPC_E_TYPE;
	if (get_le16(buf + 2) != 0)
		return IPC_E_RESERVED;
	s = &ipc_schemas[type];
	len = get_le32(buf + 4);
	if (len > s->max_payload || len > IPC_MAX_PAYLOAD)
		return IPC_E_LONG;
	if (n - IPC_HDR_LEN < len)
		return IPC_E_SHORT;
	if (n - IPC_HDR_LEN > len)
		return IPC_E_LONG;
	if ((s->fd == IPC_FD_ALWAYS && !has_fd) ||
	    (s->fd == IPC_FD_NEVER && has_fd))
		return IPC_E_FD;

	m->type = type;
	m->len = len;
	m->rpos = 0;
	m->fd = -1;
	m->overflow = 0;
	memcpy(m->payload, buf + IPC_HDR_LEN, len);
	return IPC_OK;
}
