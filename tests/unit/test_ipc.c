/*
 * Unit tests for the IPC: the pure codec (privsep/ipc_codec.c) and the
 * socket layer (privsep/ipc.c) over a real socketpair. The rejections
 * matter more than the round trips: the monitor is root and decodes what
 * a possibly hostile worker sends.
 */
#include "privsep/ipc.h"
#include "privsep/auth.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes a header by hand, independently of the codec under test. */
static size_t
raw_msg(unsigned char *buf, uint16_t type, uint16_t reserved, uint32_t len,
    const void *payload, size_t plen)
{
	buf[0] = (unsigned char)(type & 0xff);
	buf[1] = (unsigned char)(type >> 8);
	buf[2] = (unsigned char)(reserved & 0xff);
	buf[3] = (unsigned char)(reserved >> 8);
	buf[4] = (unsigned char)(len & 0xff);
	buf[5] = (unsigned char)((len >> 8) & 0xff);
	buf[6] = (unsigned char)((len >> 16) & 0xff);
	buf[7] = (unsigned char)(len >> 24);
	if (plen > 0)
		memcpy(buf + IPC_HDR_LEN, payload, plen);
	return IPC_HDR_LEN + plen;
}

static void
le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)((v >> 8) & 0xff);
	p[2] = (unsigned char)((v >> 16) & 0xff);
	p[3] = (unsigned char)(v >> 24);
}

/* A message with the given raw payload, as if decoded. */
static void
msg_with_payload(struct ipc_msg *m, enum ipc_type type, const void *p,
    size_t n)
{
	ipc_init(m, type);
	memcpy(m->payload, p, n);
	m->len = (uint32_t)n;
}

static int
count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* The number the kernel will give the next descriptor it installs. */
static int
next_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static int
fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

/* ---------------------------------------------------------------- codec */

static void
test_schemas(void)
{
	CHECK_INT(ipc_schemas[IPC_LOGIN].max_payload,
	    4 + IPC_MAX_USER + 4 + IPC_MAX_PASS + 4);
	CHECK_INT(ipc_schemas[IPC_LOGIN_RESULT].fd, IPC_FD_OPTIONAL);
	CHECK_INT(ipc_schemas[IPC_TLS_ON].max_payload, 0);
	CHECK_INT(ipc_schemas[IPC_TLS_ON].fd, IPC_FD_NEVER);
	CHECK_INT(ipc_schemas[IPC_LOG].max_payload, 4 + 4 + IPC_MAX_LOGMSG);
	CHECK_INT(ipc_schemas[IPC_PORT20_CONNECT].max_payload, 4);
	CHECK_INT(ipc_schemas[IPC_LOGIN_RESULT].max_payload, 4);
	CHECK_INT(ipc_schemas[IPC_FD_RESULT].max_payload, 4);
	CHECK_INT(ipc_schemas[IPC_FD_RESULT].fd, IPC_FD_OPTIONAL);
	CHECK_INT(ipc_schemas[IPC_LOG].fd, IPC_FD_NEVER);
	CHECK_INT(ipc_schemas[IPC_LOGIN].fd, IPC_FD_NEVER);
	CHECK_STR(ipc_schemas[IPC_LOGIN].name, "LOGIN");
	CHECK_INT(ipc_schemas[IPC_CLIENT_ACK].max_payload, 0);
	CHECK_INT(ipc_schemas[IPC_CLIENT_ACK].fd, IPC_FD_NEVER);
	CHECK_INT(ipc_schemas[IPC_SANDBOX_VIOLATION].max_payload, 4 + 4);
	CHECK_INT(ipc_schemas[IPC_SANDBOX_VIOLATION].fd, IPC_FD_NEVER);
	CHECK_STR(ipc_schemas[IPC_SANDBOX_VIOLATION].name, "SANDBOX_VIOLATION");
	for (int t = 1; t < IPC_TYPE_COUNT; t++) {
		CHECK(ipc_schemas[t].name != NULL);
		CHECK(ipc_schemas[t].max_payload <= IPC_MAX_PAYLOAD);
	}
}

static void
test_strerror(void)
{
	static const int codes[] = {
		IPC_OK, IPC_E_SHORT, IPC_E_LONG, IPC_E_TYPE, IPC_E_FD,
		IPC_E_EOF, IPC_E_IO, IPC_E_FIELD, IPC_E_RESERVED, IPC_E_EMPTY,
	};
	const char *unknown = ipc_strerror(-1000);

	CHECK(unknown != NULL);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = ipc_strerror(codes[i]);

		CHECK(s != NULL && *s != '\0');
		CHECK(strcmp(s, unknown) != 0);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(s, ipc_strerror(codes[j])) != 0);
	}
	CHECK(ipc_strerror(42) != NULL);
}

/* The wire format is fixed little-endian, whatever the host. */
static void
test_layout(void)
{
	static const unsigned char want[] = {
		0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
		0x44, 0x33, 0x22, 0x11,
	};
	static const unsigned char want_str[] = {
		0x02, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x00, 0x00,
		0x07, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 'a', 'b', 'c',
	};
	unsigned char buf[IPC_MAX_MSG];
	struct ipc_msg m;

	ipc_init(&m, IPC_PORT20_CONNECT);
	CHECK_INT(m.fd, -1);
	CHECK_INT(m.len, 0);
	ipc_put_u32(&m, 0x11223344);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), sizeof(want));
	CHECK(memcmp(buf, want, sizeof(want)) == 0);

	ipc_init(&m, IPC_LOG);
	ipc_put_u32(&m, 7);
	ipc_put_str(&m, "abc", 3);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), sizeof(want_str));
	CHECK(memcmp(buf, want_str, sizeof(want_str)) == 0);
}

static void
build_login(struct ipc_msg *m, const char *user, const char *pass)
{
	ipc_init(m, IPC_LOGIN);
	ipc_put_str(m, user, strlen(user));
	ipc_put_str(m, pass, strlen(pass));
	ipc_put_u32(m, IPC_LOGIN_TLS | IPC_LOGIN_PROT_P);
}

static void
build_log(struct ipc_msg *m, uint32_t level, const char *text)
{
	ipc_init(m, IPC_LOG);
	ipc_put_u32(m, level);
	ipc_put_str(m, text, strlen(text));
}

static void
build_u32(struct ipc_msg *m, enum ipc_type type, uint32_t v)
{
	ipc_init(m, type);
	ipc_put_u32(m, v);
}

/* Reads back what build_* wrote; checks the fields and the end. */
static void
check_login(struct ipc_msg *m, const char *user, const char *pass)
{
	char u[IPC_MAX_USER + 1], p[IPC_MAX_PASS + 1];
	size_t ul = 99, pl = 99;
	uint32_t flags = 0;

	CHECK_INT(m->type, IPC_LOGIN);
	CHECK_INT(ipc_get_str(m, u, sizeof(u), IPC_MAX_USER, &ul), 0);
	CHECK_INT(ipc_get_str(m, p, sizeof(p), IPC_MAX_PASS, &pl), 0);
	CHECK_STR(u, user);
	CHECK_STR(p, pass);
	CHECK_INT(ul, strlen(user));
	CHECK_INT(pl, strlen(pass));
	CHECK_INT(ipc_get_u32(m, &flags), 0);
	CHECK_INT(flags, IPC_LOGIN_TLS | IPC_LOGIN_PROT_P);
	CHECK_INT(ipc_get_end(m), 0);
}

static void
check_log(struct ipc_msg *m, uint32_t level, const char *text)
{
	char t[IPC_MAX_LOGMSG + 1];
	uint32_t lv = 0;

	CHECK_INT(m->type, IPC_LOG);
	CHECK_INT(ipc_get_u32(m, &lv), 0);
	CHECK_INT(lv, level);
	CHECK_INT(ipc_get_str(m, t, sizeof(t), IPC_MAX_LOGMSG, NULL), 0);
	CHECK_STR(t, text);
	CHECK_INT(ipc_get_end(m), 0);
}

static void
check_u32(struct ipc_msg *m, enum ipc_type type, uint32_t v)
{
	uint32_t got = 0;

	CHECK_INT(m->type, type);
	CHECK_INT(ipc_get_u32(m, &got), 0);
	CHECK(got == v);
	CHECK_INT(ipc_get_end(m), 0);
}

/* encode -> decode -> getters, for one message. */
static int
codec_trip(const struct ipc_msg *in, int has_fd, struct ipc_msg *out)
{
	unsigned char buf[IPC_MAX_MSG];
	int n = ipc_encode(in, buf, sizeof(buf));

	CHECK_INT(n, IPC_HDR_LEN + in->len);
	if (n < 0)
		return n;
	memset(out, 0xa5, sizeof(*out));
	return ipc_decode(buf, (size_t)n, has_fd, out);
}

static void
test_codec_roundtrip(void)
{
	char maxuser[IPC_MAX_USER + 1], maxpass[IPC_MAX_PASS + 1];
	char maxlog[IPC_MAX_LOGMSG + 1];
	struct ipc_msg m, r;

	memset(maxuser, 'u', IPC_MAX_USER);
	maxuser[IPC_MAX_USER] = '\0';
	memset(maxpass, 'p', IPC_MAX_PASS);
	maxpass[IPC_MAX_PASS] = '\0';
	memset(maxlog, 'l', IPC_MAX_LOGMSG);
	maxlog[IPC_MAX_LOGMSG] = '\0';

	build_login(&m, "alice", "s3cret with spaces");
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	CHECK_INT(r.fd, -1);
	CHECK_INT(r.rpos, 0);
	check_login(&r, "alice", "s3cret with spaces");

	build_login(&m, "", "");
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_login(&r, "", "");

	/* The largest LOGIN exactly fills its schema. */
	build_login(&m, maxuser, maxpass);
	CHECK_INT(m.len, ipc_schemas[IPC_LOGIN].max_payload);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_login(&r, maxuser, maxpass);

	build_log(&m, 3, "worker: hello\xc3\xa9");
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_log(&r, 3, "worker: hello\xc3\xa9");

	build_log(&m, 0xffffffffu, maxlog);
	CHECK_INT(m.len, ipc_schemas[IPC_LOG].max_payload);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_log(&r, 0xffffffffu, maxlog);

	build_u32(&m, IPC_PORT20_CONNECT, 20);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_u32(&r, IPC_PORT20_CONNECT, 20);

	build_u32(&m, IPC_LOGIN_RESULT, IPC_LOGIN_CLOSE);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_u32(&r, IPC_LOGIN_RESULT, IPC_LOGIN_CLOSE);

	/* FD_RESULT: a descriptor is optional at the framing level. */
	build_u32(&m, IPC_FD_RESULT, 0);
	CHECK_INT(codec_trip(&m, 1, &r), 0);
	CHECK_INT(r.fd, -1);	/* the caller stores the fd, not decode */
	check_u32(&r, IPC_FD_RESULT, 0);
	build_u32(&m, IPC_FD_RESULT, ECONNREFUSED);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	check_u32(&r, IPC_FD_RESULT, ECONNREFUSED);
}

/* The seccomp report: u32 syscall number, u32 role; exactly 8 bytes. */
static void
test_codec_violation(void)
{
	static const unsigned char want[] = {
		IPC_SANDBOX_VIOLATION, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
		0x3b, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	};
	unsigned char buf[IPC_MAX_MSG];
	struct ipc_msg m, r;
	uint32_t nr = 0, role = 0;

	ipc_init(&m, IPC_SANDBOX_VIOLATION);
	ipc_put_u32(&m, 59);
	ipc_put_u32(&m, 3);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), sizeof(want));
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	CHECK_INT(r.type, IPC_SANDBOX_VIOLATION);
	CHECK_INT(ipc_get_u32(&r, &nr), 0);
	CHECK_INT(ipc_get_u32(&r, &role), 0);
	CHECK_INT(ipc_get_end(&r), 0);
	CHECK_INT(nr, 59);
	CHECK_INT(role, 3);

	/* IPC_SYSCALL_UNKNOWN goes through as it is. */
	ipc_init(&m, IPC_SANDBOX_VIOLATION);
	ipc_put_u32(&m, IPC_SYSCALL_UNKNOWN);
	ipc_put_u32(&m, 0);
	CHECK_INT(codec_trip(&m, 0, &r), 0);
	CHECK_INT(ipc_get_u32(&r, &nr), 0);
	CHECK(nr == IPC_SYSCALL_UNKNOWN);

	/* One field short, one too many, or a descriptor: rejected. */
	CHECK_INT(ipc_decode(want, sizeof(want) - 4, 0, &r), IPC_E_SHORT);
	ipc_put_u32(&m, 0);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_LONG);
	CHECK_INT(ipc_decode(want, sizeof(want), 1, &r), IPC_E_FD);
}

static void
test_decode_short(void)
{
	unsigned char buf[64], p[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ipc_msg m;
	size_t n;

	/* Truncated header, including the empty datagram. */
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0, 4, p, 4);
	for (size_t i = 0; i < IPC_HDR_LEN; i++)
		CHECK_INT(ipc_decode(buf, i, 0, &m), IPC_E_SHORT);
	/* Truncated payload. */
	for (size_t i = IPC_HDR_LEN; i < n; i++)
		CHECK_INT(ipc_decode(buf, i, 0, &m), IPC_E_SHORT);
	CHECK_INT(ipc_decode(buf, n, 0, &m), 0);

	/* LOGIN declaring 20 bytes, carrying 19. */
	n = raw_msg(buf, IPC_LOGIN, 0, 20, "0123456789012345678", 19);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_SHORT);
}

static void
test_decode_long(void)
{
	unsigned char buf[IPC_MAX_MSG + 16], p[IPC_MAX_PAYLOAD + 8];
	struct ipc_msg m;
	size_t n;

	memset(p, 'x', sizeof(p));
	/* Payload longer than declared. */
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0, 4, p, 5);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_LOGIN_RESULT, 0, 0, p, 4);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_LOG, 0, 8, p, 9);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);

	/* Declared and present, but longer than the type allows. */
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0, 5, p, 5);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_FD_RESULT, 0, 8, p, 8);
	CHECK_INT(ipc_decode(buf, n, 1, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_LOGIN, 0, ipc_schemas[IPC_LOGIN].max_payload + 1,
	    p, ipc_schemas[IPC_LOGIN].max_payload + 1);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_LOG, 0, ipc_schemas[IPC_LOG].max_payload + 1,
	    p, ipc_schemas[IPC_LOG].max_payload + 1);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_LOG, 0, IPC_MAX_PAYLOAD + 1, p, IPC_MAX_PAYLOAD + 1);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);

	/* A huge declared length must not be believed (nor wrap). */
	n = raw_msg(buf, IPC_LOG, 0, 0xffffffffu, p, 4);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	n = raw_msg(buf, IPC_LOG, 0, 0xfffffff8u, p, 4);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
}

static void
test_decode_type_reserved(void)
{
	static const uint16_t bad_types[] = { 0, IPC_TYPE_COUNT, 999, 0x0100,
	    0xffff };
	unsigned char buf[64], p[4] = { 0 };
	struct ipc_msg m;
	size_t n;

	for (size_t i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		n = raw_msg(buf, bad_types[i], 0, 4, p, 4);
		CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_TYPE);
		n = raw_msg(buf, bad_types[i], 0, 0, p, 0);
		CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_TYPE);
	}
	n = raw_msg(buf, IPC_PORT20_CONNECT, 1, 4, p, 4);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_RESERVED);
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0x8000, 4, p, 4);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_RESERVED);
	n = raw_msg(buf, IPC_FD_RESULT, 0x0100, 4, p, 4);
	CHECK_INT(ipc_decode(buf, n, 1, &m), IPC_E_RESERVED);
}

/* Each check comes in a fixed order, so the first defect found wins. */
static void
test_decode_order(void)
{
	unsigned char buf[64], p[16] = { 0 };
	struct ipc_msg m;
	size_t n;

	/* Short header beats an unknown type. */
	n = raw_msg(buf, 999, 5, 4, p, 4);
	CHECK_INT(ipc_decode(buf, 4, 0, &m), IPC_E_SHORT);
	/* Unknown type beats reserved bits. */
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_TYPE);
	/* Reserved bits beat a too-long length. */
	n = raw_msg(buf, IPC_PORT20_CONNECT, 5, 9, p, 9);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_RESERVED);
	/* Over the schema maximum beats missing bytes. */
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0, 9, p, 2);
	CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_LONG);
	/* A bad length beats an unexpected descriptor. */
	n = raw_msg(buf, IPC_LOG, 0, 8, p, 6);
	CHECK_INT(ipc_decode(buf, n, 1, &m), IPC_E_SHORT);
	n = raw_msg(buf, IPC_LOG, 0, 8, p, 10);
	CHECK_INT(ipc_decode(buf, n, 1, &m), IPC_E_LONG);
}

static void
test_decode_fd_rule(void)
{
	unsigned char buf[64], p[4] = { 0 };
	struct ipc_msg m;
	size_t n;

	for (int t = 1; t < IPC_TYPE_COUNT; t++) {
		/* A payload every type accepts: 4 bytes, or none where the
		 * schema allows none (CLIENT_FD). */
		uint32_t plen = ipc_schemas[t].max_payload < 4 ? ipc_schemas[t].max_payload : 4;

		n = raw_msg(buf, (uint16_t)t, 0, plen, p, plen);
		if (ipc_schemas[t].fd == IPC_FD_NEVER) {
			CHECK_INT(ipc_decode(buf, n, 1, &m), IPC_E_FD);
			CHECK_INT(ipc_decode(buf, n, 0, &m), 0);
		} else if (ipc_schemas[t].fd == IPC_FD_ALWAYS) {
			CHECK_INT(ipc_decode(buf, n, 0, &m), IPC_E_FD);
			CHECK_INT(ipc_decode(buf, n, 1, &m), 0);
		} else {
			CHECK_INT(ipc_decode(buf, n, 0, &m), 0);
			CHECK_INT(ipc_decode(buf, n, 1, &m), 0);
		}
	}
}

/* A failed decode leaves the caller's message as it was. */
static void
test_decode_untouched(void)
{
	unsigned char buf[64], p[4] = { 0 };
	struct ipc_msg m;
	size_t n;

	build_u32(&m, IPC_LOGIN_RESULT, 1);
	n = raw_msg(buf, IPC_LOG, 0, 4, p, 4);
	CHECK_INT(ipc_decode(buf, n, 1, &m), IPC_E_FD);
	CHECK_INT(m.type, IPC_LOGIN_RESULT);
	CHECK_INT(m.len, 4);
	check_u32(&m, IPC_LOGIN_RESULT, 1);
}

static void
test_get_u32(void)
{
	unsigned char p[8] = { 1, 0, 0, 0, 0xff, 0xff, 0xff };
	struct ipc_msg m;
	uint32_t v;

	for (size_t n = 0; n < 4; n++) {
		msg_with_payload(&m, IPC_LOG, p, n);
		v = 42;
		CHECK_INT(ipc_get_u32(&m, &v), IPC_E_FIELD);
		CHECK_INT(v, 42);
		CHECK_INT(m.rpos, 0);
		CHECK_INT(ipc_get_end(&m), n == 0 ? 0 : IPC_E_LONG);
	}
	/* One good field, then a 3-byte tail. */
	msg_with_payload(&m, IPC_LOG, p, 7);
	CHECK_INT(ipc_get_u32(&m, &v), 0);
	CHECK_INT(v, 1);
	CHECK_INT(m.rpos, 4);
	v = 42;
	CHECK_INT(ipc_get_u32(&m, &v), IPC_E_FIELD);
	CHECK_INT(v, 42);
	CHECK_INT(m.rpos, 4);
	CHECK_INT(ipc_get_end(&m), IPC_E_LONG);

	/* A corrupted cursor beyond len must not be read past. */
	msg_with_payload(&m, IPC_LOG, p, 4);
	m.rpos = 1000;
	CHECK_INT(ipc_get_u32(&m, &v), IPC_E_FIELD);
}

static void
test_get_str(void)
{
	unsigned char p[64];
	char buf[16];
	struct ipc_msg m;
	size_t len;

	/* Length prefix itself truncated. */
	le32(p, 3);
	for (size_t n = 0; n < 4; n++) {
		msg_with_payload(&m, IPC_LOG, p, n);
		CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 15, NULL), IPC_E_FIELD);
		CHECK_INT(m.rpos, 0);
	}

	/* Declared length beyond the payload. */
	le32(p, 5);
	memcpy(p + 4, "abcd", 4);
	msg_with_payload(&m, IPC_LOG, p, 8);
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 15, NULL), IPC_E_FIELD);
	CHECK_INT(m.rpos, 0);
	le32(p, 0xffffffffu);
	msg_with_payload(&m, IPC_LOG, p, 8);
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 15, NULL), IPC_E_FIELD);
	le32(p, 0xfffffffcu);	/* 4 + n wraps to 0 in 32 bits */
	msg_with_payload(&m, IPC_LOG, p, 8);
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), SIZE_MAX, NULL), IPC_E_FIELD);
	CHECK_INT(m.rpos, 0);

	/* Exactly right, then one byte too many for maxlen or for buf. */
	le32(p, 4);
	msg_with_payload(&m, IPC_LOG, p, 8);
	len = 99;
	strcpy(buf, "zzzzzzzz");
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 4, &len), 0);
	CHECK_STR(buf, "abcd");
	CHECK_INT(len, 4);
	CHECK_INT(m.rpos, 8);
	CHECK_INT(ipc_get_end(&m), 0);

	msg_with_payload(&m, IPC_LOG, p, 8);
	strcpy(buf, "keep");
	len = 99;
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 3, &len), IPC_E_FIELD);
	CHECK_STR(buf, "keep");
	CHECK_INT(len, 99);
	CHECK_INT(m.rpos, 0);
	CHECK_INT(ipc_get_str(&m, buf, 4, 100, &len), IPC_E_FIELD);
	CHECK_INT(ipc_get_str(&m, buf, 0, 100, &len), IPC_E_FIELD);
	CHECK_INT(m.rpos, 0);
	CHECK_INT(ipc_get_str(&m, buf, 5, 4, &len), 0);
	CHECK_STR(buf, "abcd");

	/* Embedded NUL, at the start, middle and end. */
	for (int at = 0; at < 4; at++) {
		le32(p, 4);
		memcpy(p + 4, "abcd", 4);
		p[4 + at] = '\0';
		msg_with_payload(&m, IPC_LOGIN, p, 8);
		strcpy(buf, "keep");
		CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 15, NULL), IPC_E_FIELD);
		CHECK_STR(buf, "keep");
		CHECK_INT(m.rpos, 0);
	}

	/* Empty string, then leftover bytes that ipc_get_end must see. */
	le32(p, 0);
	p[4] = 'x';
	msg_with_payload(&m, IPC_LOG, p, 5);
	buf[0] = 'q';
	CHECK_INT(ipc_get_str(&m, buf, 1, 0, &len), 0);
	CHECK_STR(buf, "");
	CHECK_INT(len, 0);
	CHECK_INT(m.rpos, 4);
	CHECK_INT(ipc_get_end(&m), IPC_E_LONG);

	/* A failed getter leaves the cursor where a retry still works. */
	le32(p, 2);
	memcpy(p + 4, "hi", 2);
	le32(p + 6, 77);
	msg_with_payload(&m, IPC_LOG, p, 10);
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 1, NULL), IPC_E_FIELD);
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 2, NULL), 0);
	CHECK_STR(buf, "hi");
	{
		uint32_t v = 0;

		CHECK_INT(ipc_get_u32(&m, &v), 0);
		CHECK_INT(v, 77);
	}
	CHECK_INT(ipc_get_end(&m), 0);
	CHECK_INT(ipc_get_str(&m, buf, sizeof(buf), 2, NULL), IPC_E_FIELD);
}

static void
test_put_overflow(void)
{
	static char big[IPC_MAX_PAYLOAD + 16];
	unsigned char buf[IPC_MAX_MSG];
	struct ipc_msg m;

	memset(big, 'b', sizeof(big));

	/* u32 fields fill the payload exactly, the next one overflows. */
	ipc_init(&m, IPC_LOG);
	for (int i = 0; i < IPC_MAX_PAYLOAD / 4; i++)
		ipc_put_u32(&m, (uint32_t)i);
	CHECK_INT(m.overflow, 0);
	CHECK_INT(m.len, IPC_MAX_PAYLOAD);
	ipc_put_u32(&m, 1);
	CHECK_INT(m.overflow, 1);
	CHECK_INT(m.len, IPC_MAX_PAYLOAD);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_LONG);

	/* A string that fills the payload to the byte is fine... */
	ipc_init(&m, IPC_LOG);
	ipc_put_str(&m, big, IPC_MAX_PAYLOAD - 4);
	CHECK_INT(m.overflow, 0);
	CHECK_INT(m.len, IPC_MAX_PAYLOAD);
	/* ...but not for LOG's schema, so encode refuses it. */
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_LONG);

	ipc_init(&m, IPC_LOG);
	ipc_put_str(&m, big, IPC_MAX_PAYLOAD - 3);
	CHECK_INT(m.overflow, 1);
	CHECK_INT(m.len, 0);

	/* A length that would wrap 4 + len must not sneak through. */
	ipc_init(&m, IPC_LOG);
	ipc_put_str(&m, big, SIZE_MAX);
	CHECK_INT(m.overflow, 1);
	ipc_init(&m, IPC_LOG);
	ipc_put_str(&m, big, SIZE_MAX - 3);
	CHECK_INT(m.overflow, 1);
	ipc_init(&m, IPC_LOG);
	ipc_put_str(&m, big, (size_t)UINT32_MAX + 1);
	CHECK_INT(m.overflow, 1);
	CHECK_INT(m.len, 0);

	/* Overflow is sticky: a later small put does not clear it. */
	ipc_put_u32(&m, 1);
	CHECK_INT(m.overflow, 1);
	CHECK_INT(m.len, 0);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_LONG);

	/* An over-long user for LOGIN fits the payload but not the schema. */
	ipc_init(&m, IPC_LOGIN);
	ipc_put_str(&m, big, IPC_MAX_USER + IPC_MAX_PASS + 5);
	ipc_put_str(&m, "", 0);
	CHECK_INT(m.overflow, 0);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_LONG);

	/* PORT20_CONNECT with one extra field. */
	build_u32(&m, IPC_PORT20_CONNECT, 20);
	ipc_put_u32(&m, 0);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_LONG);
}

static void
test_encode_errors(void)
{
	unsigned char buf[IPC_MAX_MSG];
	struct ipc_msg m;

	ipc_init(&m, IPC_NONE);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_TYPE);
	ipc_init(&m, IPC_TYPE_COUNT);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_TYPE);
	m.type = 999;
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_E_TYPE);

	/* The caller's buffer is too small: nothing is written past it. */
	build_u32(&m, IPC_LOGIN_RESULT, 0);
	memset(buf, 0xee, sizeof(buf));
	CHECK_INT(ipc_encode(&m, buf, 11), IPC_E_LONG);
	CHECK_INT(ipc_encode(&m, buf, 4), IPC_E_LONG);
	CHECK_INT(ipc_encode(&m, buf, 0), IPC_E_LONG);
	CHECK_INT(ipc_encode(&m, buf, 12), 12);
	CHECK_INT(buf[12], 0xee);

	/* An empty payload is a valid encoding (decode then fails the getters). */
	ipc_init(&m, IPC_LOGIN_RESULT);
	CHECK_INT(ipc_encode(&m, buf, sizeof(buf)), IPC_HDR_LEN);
}

static void
test_check_fd_result(void)
{
	struct ipc_msg m;

	build_u32(&m, IPC_FD_RESULT, 0);
	m.fd = 5;
	CHECK_INT(ipc_check_fd_result(&m, 0), 0);
	CHECK_INT(ipc_check_fd_result(&m, EACCES), IPC_E_FD);
	m.fd = -1;
	CHECK_INT(ipc_check_fd_result(&m, 0), IPC_E_FD);
	CHECK_INT(ipc_check_fd_result(&m, EACCES), 0);
	build_u32(&m, IPC_LOGIN_RESULT, 0);
	CHECK_INT(ipc_check_fd_result(&m, 0), IPC_E_TYPE);
}

/* --------------------------------------------------------------- socket */

/* Sends one raw datagram, with nfds descriptors attached. */
static ssize_t
raw_send(int sock, const void *buf, size_t n, const int *fds, int nfds)
{
	union {
		struct cmsghdr hdr;
		unsigned char space[CMSG_SPACE(32 * sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, n };
	struct msghdr msg;

	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		struct cmsghdr *c;

		msg.msg_control = ctl.space;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL);
}

static int
nothing_pending(int sock)
{
	char c;

	return recv(sock, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

static void
test_socketpair(void)
{
	int sv[2], type = 0;
	socklen_t sl = sizeof(type);

	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &sl) == 0);
	CHECK_INT(type, SOCK_SEQPACKET);
	CHECK(fcntl(sv[0], F_GETFD) & FD_CLOEXEC);
	CHECK(fcntl(sv[1], F_GETFD) & FD_CLOEXEC);
	close(sv[0]);
	close(sv[1]);
}

static void
test_socket_roundtrip(void)
{
	struct ipc_msg m, r;
	int sv[2];

	CHECK_INT(ipc_socketpair(sv), 0);

	build_login(&m, "bob", "pw");
	CHECK_INT(ipc_send(sv[0], &m), 0);
	memset(&r, 0x5a, sizeof(r));
	CHECK_INT(ipc_recv(sv[1], &r), 0);
	CHECK_INT(r.fd, -1);
	check_login(&r, "bob", "pw");

	build_log(&m, 6, "a log line");
	CHECK_INT(ipc_send(sv[0], &m), 0);
	CHECK_INT(ipc_recv(sv[1], &r), 0);
	CHECK_INT(r.fd, -1);
	check_log(&r, 6, "a log line");

	build_u32(&m, IPC_PORT20_CONNECT, 2121);
	CHECK_INT(ipc_send(sv[0], &m), 0);
	CHECK_INT(ipc_recv(sv[1], &r), 0);
	check_u32(&r, IPC_PORT20_CONNECT, 2121);

	/* Both directions work, messages are not merged or split. */
	build_u32(&m, IPC_LOGIN_RESULT, IPC_LOGIN_OK);
	CHECK_INT(ipc_send(sv[1], &m), 0);
	build_u32(&m, IPC_LOGIN_RESULT, IPC_LOGIN_FAIL);
	CHECK_INT(ipc_send(sv[1], &m), 0);
	CHECK_INT(ipc_recv(sv[0], &r), 0);
	check_u32(&r, IPC_LOGIN_RESULT, IPC_LOGIN_OK);
	CHECK_INT(ipc_recv(sv[0], &r), 0);
	check_u32(&r, IPC_LOGIN_RESULT, IPC_LOGIN_FAIL);

	/* FD_RESULT with an error and no descriptor. */
	build_u32(&m, IPC_FD_RESULT, EADDRINUSE);
	CHECK_INT(ipc_send(sv[1], &m), 0);
	CHECK_INT(ipc_recv(sv[0], &r), 0);
	CHECK_INT(r.fd, -1);
	CHECK_INT(ipc_check_fd_result(&r, EADDRINUSE), 0);
	check_u32(&r, IPC_FD_RESULT, EADDRINUSE);

	close(sv[0]);
	close(sv[1]);
}

static void
test_socket_fd_pass(void)
{
	struct ipc_msg m, r;
	int sv[2], pfd[2];
	uint32_t err = 99;
	char got[8] = "";

	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(pipe(pfd) == 0);

	build_u32(&m, IPC_FD_RESULT, 0);
	m.fd = pfd[1];
	CHECK_INT(ipc_send(sv[1], &m), 0);
	CHECK_INT(ipc_recv(sv[0], &r), 0);
	CHECK(r.fd >= 0);
	CHECK(r.fd != pfd[1]);
	/* MSG_CMSG_CLOEXEC: a received descriptor never leaks into exec. */
	CHECK(fcntl(r.fd, F_GETFD) & FD_CLOEXEC);
	CHECK_INT(ipc_get_u32(&r, &err), 0);
	CHECK_INT(err, 0);
	CHECK_INT(ipc_check_fd_result(&r, err), 0);

	/* The received descriptor is the same pipe. */
	close(pfd[1]);
	CHECK_INT(write(r.fd, "ping", 4), 4);
	close(r.fd);
	CHECK_INT(read(pfd[0], got, sizeof(got) - 1), 4);
	CHECK_STR(got, "ping");
	/* Every write end is closed now: nothing else holds a copy. */
	CHECK_INT(read(pfd[0], got, sizeof(got)), 0);
	close(pfd[0]);
	close(sv[0]);
	close(sv[1]);
}

static void
test_send_refusals(void)
{
	struct ipc_msg m;
	int sv[2], pfd[2];

	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(pipe(pfd) == 0);

	/* Sending a descriptor on an FD_NEVER type is a bug: refused. */
	build_log(&m, 1, "x");
	m.fd = pfd[0];
	CHECK_INT(ipc_send(sv[0], &m), IPC_E_FD);
	build_login(&m, "u", "p");
	m.fd = pfd[0];
	CHECK_INT(ipc_send(sv[0], &m), IPC_E_FD);
	CHECK(nothing_pending(sv[1]));

	/* Overflowed and invalid messages never reach the wire. */
	ipc_init(&m, IPC_LOG);
	ipc_put_str(&m, "x", SIZE_MAX);
	CHECK_INT(ipc_send(sv[0], &m), IPC_E_LONG);
	ipc_init(&m, IPC_NONE);
	CHECK_INT(ipc_send(sv[0], &m), IPC_E_TYPE);
	build_u32(&m, IPC_PORT20_CONNECT, 1);
	ipc_put_u32(&m, 1);
	CHECK_INT(ipc_send(sv[0], &m), IPC_E_LONG);
	CHECK(nothing_pending(sv[1]));

	/* A closed peer is an error code, not SIGPIPE. */
	close(sv[1]);
	build_u32(&m, IPC_PORT20_CONNECT, 1);
	CHECK_INT(ipc_send(sv[0], &m), IPC_E_EOF);
	close(sv[0]);
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * On SOCK_SEQPACKET a datagram of zero bytes reads as 0 bytes, as the
 * end does: from a peer that is still there it is a protocol error, not
 * the end (issue 10, 8b: the monitor took it for the worker's death and
 * waited for it).
 */
static void
test_recv_empty(void)
{
	unsigned char rec[4];
	struct ipc_msg m;
	int sv[2], pfd[2], fd = 99, before;

	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(pipe(pfd) == 0);
	before = count_open_fds();
	CHECK(raw_send(sv[0], "", 0, NULL, 0) == 0);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_EMPTY);
	CHECK_INT(m.fd, -1);
	/* With a descriptor: closed, not leaked. */
	CHECK(raw_send(sv[0], "", 0, &pfd[0], 1) == 0);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_EMPTY);
	CHECK_INT(count_open_fds(), before);
	CHECK(raw_send(sv[0], "", 0, NULL, 0) == 0);
	CHECK_INT(ipc_recv_record(sv[1], rec, sizeof(rec), 0, &fd), IPC_E_EMPTY);
	CHECK_INT(fd, -1);
	/* The real end is still the end, even behind an empty datagram. */
	CHECK(raw_send(sv[0], "", 0, NULL, 0) == 0);
	close(sv[0]);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_EOF);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_EOF);
	close(sv[1]);
	close(pfd[0]);
	close(pfd[1]);
}

/*
 * A peer that closes with our datagrams still unread in its queue (a
 * worker that ended before reading an answer it asked for ahead): the
 * kernel reports ECONNRESET, and it is the end, not an I/O error.
 */
static void
test_recv_peer_closed_unread(void)
{
	unsigned char rec[4];
	struct ipc_msg m;
	int sv[2], fd = 99;

	CHECK_INT(ipc_socketpair(sv), 0);
	build_login(&m, "bob", "pw");
	CHECK_INT(ipc_send(sv[0], &m), 0);
	close(sv[1]);
	CHECK_INT(ipc_recv(sv[0], &m), IPC_E_EOF);
	CHECK_INT(m.fd, -1);
	close(sv[0]);
	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK_INT(ipc_send_record(sv[0], "abcd", 4, -1), 0);
	close(sv[1]);
	CHECK_INT(ipc_recv_record(sv[0], rec, sizeof(rec), 0, &fd), IPC_E_EOF);
	CHECK_INT(fd, -1);
	close(sv[0]);
}

/* Raw datagrams a hostile peer could send. */
static void
test_recv_rejects(void)
{
	unsigned char buf[IPC_MAX_MSG + 128], p[8] = { 0 };
	struct ipc_msg m;
	int sv[2], pfd[2], before, next;
	size_t n;

	memset(buf, 0, sizeof(buf));
	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(pipe(pfd) == 0);

	/* Truncated header, truncated payload, payload too long. */
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0, 4, p, 4);
	CHECK(raw_send(sv[0], buf, 5, NULL, 0) == 5);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_SHORT);
	CHECK(raw_send(sv[0], buf, n - 1, NULL, 0) == (ssize_t)n - 1);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_SHORT);
	n = raw_msg(buf, IPC_PORT20_CONNECT, 0, 4, p, 6);
	CHECK(raw_send(sv[0], buf, n, NULL, 0) == (ssize_t)n);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_LONG);
	n = raw_msg(buf, 999, 0, 4, p, 4);
	CHECK(raw_send(sv[0], buf, n, NULL, 0) == (ssize_t)n);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_TYPE);
	n = raw_msg(buf, IPC_LOG, 2, 4, p, 4);
	CHECK(raw_send(sv[0], buf, n, NULL, 0) == (ssize_t)n);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_RESERVED);

	/* An fd on a LOG datagram: rejected, and the fd closed on arrival. */
	before = count_open_fds();
	next = next_free_fd();
	n = raw_msg(buf, IPC_LOG, 0, 8, p, 8);
	CHECK(raw_send(sv[0], buf, n, &pfd[0], 1) == (ssize_t)n);
	m.fd = 12345;
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_FD);
	CHECK_INT(m.fd, -1);
	CHECK(!fd_is_open(next));
	CHECK_INT(count_open_fds(), before);

	/* FD_RESULT with two descriptors: both closed. */
	{
		int two[2] = { pfd[0], pfd[1] };

		n = raw_msg(buf, IPC_FD_RESULT, 0, 4, p, 4);
		CHECK(raw_send(sv[0], buf, n, two, 2) == (ssize_t)n);
		CHECK_INT(ipc_recv(sv[1], &m), IPC_E_FD);
		CHECK_INT(count_open_fds(), before);
	}

	/* More descriptors than the receive buffer holds (MSG_CTRUNC). */
	{
		int many[20];

		for (int i = 0; i < 20; i++)
			many[i] = pfd[i & 1];
		n = raw_msg(buf, IPC_FD_RESULT, 0, 4, p, 4);
		CHECK(raw_send(sv[0], buf, n, many, 20) == (ssize_t)n);
		CHECK_INT(ipc_recv(sv[1], &m), IPC_E_FD);
		CHECK_INT(count_open_fds(), before);
	}

	/* An fd on a message with a bad payload is closed too. */
	n = raw_msg(buf, IPC_FD_RESULT, 0, 4, p, 3);
	CHECK(raw_send(sv[0], buf, n, &pfd[1], 1) == (ssize_t)n);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_SHORT);
	CHECK(!fd_is_open(next));
	CHECK_INT(count_open_fds(), before);

	/* Oversized datagrams: far over, and just one byte over. */
	n = raw_msg(buf, IPC_LOG, 0, IPC_MAX_PAYLOAD + 100, NULL, 0);
	CHECK(raw_send(sv[0], buf, IPC_MAX_MSG + 100, &pfd[0], 1) ==
	    IPC_MAX_MSG + 100);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_LONG);
	CHECK_INT(count_open_fds(), before);
	n = raw_msg(buf, IPC_LOG, 0, ipc_schemas[IPC_LOG].max_payload, NULL, 0);
	CHECK(raw_send(sv[0], buf, IPC_MAX_MSG + 1, NULL, 0) == IPC_MAX_MSG + 1);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_LONG);
	CHECK(raw_send(sv[0], buf, IPC_MAX_MSG + 100, NULL, 0) ==
	    IPC_MAX_MSG + 100);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_LONG);

	/* After all that the channel still carries good messages. */
	build_u32(&m, IPC_FD_RESULT, 0);
	m.fd = pfd[1];
	CHECK_INT(ipc_send(sv[0], &m), 0);
	CHECK_INT(ipc_recv(sv[1], &m), 0);
	CHECK(m.fd >= 0);
	CHECK_INT(count_open_fds(), before + 1);
	close(m.fd);

	/* The peer goes away. */
	close(sv[0]);
	CHECK_INT(ipc_recv(sv[1], &m), IPC_E_EOF);
	CHECK_INT(m.fd, -1);
	close(sv[1]);

	/* Not a socket at all. */
	CHECK_INT(ipc_recv(pfd[0], &m), IPC_E_IO);
	CHECK_INT(ipc_recv(-1, &m), IPC_E_IO);
	close(pfd[0]);
	close(pfd[1]);
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/* A signal arriving while ipc_recv blocks does not lose the message. */
static void
test_recv_eintr(void)
{
	struct sigaction sa, old;
	struct itimerval it;
	struct ipc_msg m;
	int sv[2], status;
	pid_t pid;

	CHECK_INT(ipc_socketpair(sv), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: recvmsg gets EINTR */
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, &old) == 0);

	pid = fork();
	if (pid == 0) {
		struct ipc_msg c;

		usleep(300 * 1000);
		build_u32(&c, IPC_LOGIN_RESULT, 2);
		_exit(ipc_send(sv[0], &c) == 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 50 * 1000;
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	CHECK_INT(ipc_recv(sv[1], &m), 0);
	check_u32(&m, IPC_LOGIN_RESULT, 2);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	sigaction(SIGALRM, &old, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* --- Fixed-size records between root processes, and their check --- */

struct rec {
	uint32_t a, b;
	char text[40];
};

static void
test_record_roundtrip(void)
{
	struct rec out = { 7, 9, "hello" }, in;
	int sv[2], pfd[2], fd = -1;

	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(pipe(pfd) == 0);
	CHECK_INT(ipc_send_record(sv[0], &out, sizeof(out), pfd[0]), 0);
	memset(&in, 0, sizeof(in));
	CHECK_INT(ipc_recv_record(sv[1], &in, sizeof(in), 1, &fd), 0);
	CHECK(in.a == 7 && in.b == 9 && strcmp(in.text, "hello") == 0);
	CHECK(fd >= 0 && fd != pfd[0]);
	CHECK(write(pfd[1], "x", 1) == 1);
	{
		char c = 0;

		CHECK(read(fd, &c, 1) == 1 && c == 'x');
	}
	close(fd);
	/* Without a descriptor, when none is wanted. */
	CHECK_INT(ipc_send_record(sv[0], &out, sizeof(out), -1), 0);
	CHECK_INT(ipc_recv_record(sv[1], &in, sizeof(in), 0, &fd), 0);
	CHECK_INT(fd, -1);
	close(pfd[0]);
	close(pfd[1]);
	close(sv[0]);
	close(sv[1]);
}

static void
test_record_rejects(void)
{
	struct rec r = { 1, 2, "x" };
	unsigned char big[sizeof(r) + 16];
	int sv[2], pfd[2], fd = 123, before;

	CHECK_INT(ipc_socketpair(sv), 0);
	CHECK(pipe(pfd) == 0);
	/* Shorter and longer datagrams than the record. */
	CHECK(send(sv[0], &r, sizeof(r) - 1, 0) == (ssize_t)sizeof(r) - 1);
	CHECK_INT(ipc_recv_record(sv[1], &r, sizeof(r), 0, &fd), IPC_E_SHORT);
	CHECK_INT(fd, -1);
	memset(big, 'A', sizeof(big));
	CHECK(send(sv[0], big, sizeof(big), 0) == (ssize_t)sizeof(big));
	CHECK_INT(ipc_recv_record(sv[1], &r, sizeof(r), 0, &fd), IPC_E_LONG);
	CHECK(send(sv[0], big, sizeof(r) + 1, 0) == (ssize_t)sizeof(r) + 1);
	CHECK_INT(ipc_recv_record(sv[1], &r, sizeof(r), 0, &fd), IPC_E_LONG);
	/* A descriptor missing, or one that was not asked for (and is closed). */
	CHECK_INT(ipc_send_record(sv[0], &r, sizeof(r), -1), 0);
	CHECK_INT(ipc_recv_record(sv[1], &r, sizeof(r), 1, &fd), IPC_E_FD);
	before = dup(0);
	close(before);
	CHECK_INT(ipc_send_record(sv[0], &r, sizeof(r), pfd[0]), 0);
	CHECK_INT(ipc_recv_record(sv[1], &r, sizeof(r), 0, &fd), IPC_E_FD);
	CHECK_INT(fd, -1);
	/* The descriptor that came with the rejected record was closed:
	 * the lowest free number is the same as before. */
	{
		int next = dup(0);

		CHECK_INT(next, before);
		close(next);
	}
	CHECK(fd_is_open(pfd[0]));
	/* The peer gone. */
	close(sv[0]);
	CHECK_INT(ipc_recv_record(sv[1], &r, sizeof(r), 1, &fd), IPC_E_EOF);
	CHECK_INT(ipc_send_record(sv[1], &r, sizeof(r), -1), IPC_E_EOF);
	close(sv[1]);
	close(pfd[0]);
	close(pfd[1]);
}

static void
good_user(struct auth_user *u)
{
	memset(u, 0, sizeof(*u));
	strcpy(u->name, "alice");
	u->uid = 1000;
	u->gid = 1000;
	u->ngroups = 2;
	u->groups[0] = 1000;
	u->groups[1] = 27;
	strcpy(u->chroot_dir, "/home/alice");
	strcpy(u->start_dir, "/");
	u->umask = 022;
}

static void
test_auth_user_check(void)
{
	struct auth_user u;

	good_user(&u);
	CHECK_INT(auth_user_check(&u), 0);
	u.chroot_dir[0] = '\0';
	strcpy(u.start_dir, "/home/alice");
	CHECK_INT(auth_user_check(&u), 0);	/* not chrooted */
	good_user(&u);
	u.anonymous = 1;
	u.ngroups = 0;
	CHECK_INT(auth_user_check(&u), 0);
	good_user(&u);
	u.ngroups = AUTH_MAX_GROUPS;
	CHECK_INT(auth_user_check(&u), 0);
	good_user(&u);
	u.guest = 1;
	u.own_config = 1;
	CHECK_INT(auth_user_check(&u), 0);
	good_user(&u);
	u.guest = 2;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.own_config = -1;
	CHECK_INT(auth_user_check(&u), -1);

	good_user(&u);
	u.uid = 0;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.gid = 0;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.name[0] = '\0';
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	memset(u.name, 'a', sizeof(u.name));	/* unterminated */
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	memset(u.chroot_dir, '/', sizeof(u.chroot_dir));
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	memset(u.start_dir, '/', sizeof(u.start_dir));
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.ngroups = -1;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.ngroups = AUTH_MAX_GROUPS + 1;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	strcpy(u.chroot_dir, "home/alice");
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	strcpy(u.start_dir, "");
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	strcpy(u.start_dir, "relative");
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.anonymous = 2;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.umask = 01022;
	CHECK_INT(auth_user_check(&u), -1);

	/* session_support's resource limits: known resources, soft <= hard. */
	good_user(&u);
	u.rlim_set = 1U << RLIMIT_FSIZE | 1U << (AUTH_RLIMITS - 1);
	u.rlim[RLIMIT_FSIZE].rlim_cur = 1024;
	u.rlim[RLIMIT_FSIZE].rlim_max = 1024;
	u.rlim[AUTH_RLIMITS - 1].rlim_cur = RLIM_INFINITY;
	u.rlim[AUTH_RLIMITS - 1].rlim_max = RLIM_INFINITY;
	CHECK_INT(auth_user_check(&u), 0);
	u.rlim[RLIMIT_FSIZE].rlim_cur = 2048;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.rlim_set = 1U << AUTH_RLIMITS;
	CHECK_INT(auth_user_check(&u), -1);
	good_user(&u);
	u.rlim_set = 1U << 31;
	CHECK_INT(auth_user_check(&u), -1);
}

int
main(void)
{
	test_schemas();
	test_strerror();
	test_layout();
	test_codec_roundtrip();
	test_codec_violation();
	test_decode_short();
	test_decode_long();
	test_decode_type_reserved();
	test_decode_order();
	test_decode_fd_rule();
	test_decode_untouched();
	test_get_u32();
	test_get_str();
	test_put_overflow();
	test_encode_errors();
	test_check_fd_result();
	test_socketpair();
	test_socket_roundtrip();
	test_socket_fd_pass();
	test_send_refusals();
	test_recv_rejects();
	test_recv_empty();
	test_recv_peer_closed_unread();
	test_recv_eintr();
	test_record_roundtrip();
	test_record_rejects();
	test_auth_user_check();
	return check_summary();
}
