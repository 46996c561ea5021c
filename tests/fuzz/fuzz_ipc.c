/*
 * Fuzz target for the IPC codec. Input: one flag byte (bit 0: a
 * descriptor came with the datagram), then the datagram itself.
 *
 * Beyond "never crashes or reads out of bounds", it checks the codec's
 * promises, aborting on any broken one:
 *  - a decoded message re-encodes to exactly the input bytes;
 *  - what decode accepts fits the type's schema and the fd rule;
 *  - getters never move the cursor past the payload, never move it on
 *    failure, and return NUL-free strings of the reported length.
 */
#include "privsep/ipc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* A made-up descriptor number: the codec only looks at fd >= 0. */
#define FUZZ_FAKE_FD 7

static int
get_u32_checked(struct ipc_msg *m, uint32_t *v)
{
	uint32_t before = m->rpos;
	int r = ipc_get_u32(m, v);

	FUZZ_CHECK(r == IPC_OK || r == IPC_E_FIELD);
	FUZZ_CHECK(r == IPC_OK ? m->rpos == before + 4 : m->rpos == before);
	FUZZ_CHECK(m->rpos <= m->len);
	return r;
}

/* buf has exactly maxlen + 1 bytes, as a real caller sizes it. */
static int
get_str_checked(struct ipc_msg *m, char *buf, size_t maxlen, size_t *lenp)
{
	uint32_t before = m->rpos;
	size_t len = (size_t)-1;
	int r;

	r = ipc_get_str(m, buf, maxlen + 1, maxlen, &len);
	FUZZ_CHECK(r == IPC_OK || r == IPC_E_FIELD);
	if (r == IPC_OK) {
		FUZZ_CHECK(len <= maxlen);
		FUZZ_CHECK(strlen(buf) == len);
		FUZZ_CHECK(m->rpos == before + 4 + len);
	} else {
		FUZZ_CHECK(len == (size_t)-1);
		FUZZ_CHECK(m->rpos == before);
	}
	FUZZ_CHECK(m->rpos <= m->len);
	*lenp = len;
	return r;
}

static int
walk_str(struct ipc_msg *m, size_t maxlen, struct ipc_msg *re)
{
	char *buf = malloc(maxlen + 1);
	size_t len;
	int r;

	FUZZ_CHECK(buf != NULL);
	r = get_str_checked(m, buf, maxlen, &len);
	if (r == IPC_OK)
		ipc_put_str(re, buf, len);
	free(buf);
	return r;
}

static int
walk_u32(struct ipc_msg *m, uint32_t *v, struct ipc_msg *re)
{
	int r = get_u32_checked(m, v);

	if (r == IPC_OK)
		ipc_put_u32(re, *v);
	return r;
}

/*
 * Reads the payload the way the real receiver of each type does, and
 * writes the fields it got into a second message with the putters: a
 * fully read payload must come out byte for byte the same.
 */
static void
walk_schema(struct ipc_msg *m)
{
	struct ipc_msg re;
	uint32_t v;
	int ok;

	ipc_init(&re, (enum ipc_type)m->type);
	switch (m->type) {
	case IPC_LOGIN:		/* str user, str pass, u32 flags */
		ok = walk_str(m, IPC_MAX_USER, &re) == IPC_OK &&
		    walk_str(m, IPC_MAX_PASS, &re) == IPC_OK &&
		    walk_u32(m, &v, &re) == IPC_OK;
		break;
	case IPC_XFERLOG:	/* u32 flags, bytes high, bytes low, ms; str path */
		ok = 1;
		for (int i = 0; ok && i < 4; i++)
			ok = walk_u32(m, &v, &re) == IPC_OK;
		ok = ok && walk_str(m, IPC_MAX_XFERPATH, &re) == IPC_OK;
		break;
	case IPC_USER_CHECK:	/* str user */
		ok = walk_str(m, IPC_MAX_USER, &re) == IPC_OK;
		break;
	case IPC_LOG:
		ok = walk_u32(m, &v, &re) == IPC_OK &&
		    walk_str(m, IPC_MAX_LOGMSG, &re) == IPC_OK;
		break;
	case IPC_PORT20_CONNECT:
	case IPC_LOGIN_RESULT:
	case IPC_CHOWN_RESULT:
		ok = walk_u32(m, &v, &re) == IPC_OK;
		break;
	case IPC_SANDBOX_VIOLATION:	/* u32 syscall, u32 role */
		ok = walk_u32(m, &v, &re) == IPC_OK &&
		    walk_u32(m, &v, &re) == IPC_OK;
		break;
	case IPC_PORT_CONNECT:
	case IPC_PROXY_CLIENT:	/* u32 family, 4 x u32 address, u32 port */
		ok = 1;
		for (int i = 0; ok && i < 6; i++)
			ok = walk_u32(m, &v, &re) == IPC_OK;
		break;
	case IPC_PASV_LISTEN:
	case IPC_CLIENT_FD:
	case IPC_CLIENT_ACK:
	case IPC_PROXY_OK:
	case IPC_TLS_ON:
	case IPC_CHOWN_UPLOAD:
		ok = 1;	/* no fields */
		break;
	case IPC_FD_RESULT:
		ok = walk_u32(m, &v, &re) == IPC_OK;
		if (ok) {
			int r = ipc_check_fd_result(m, v);

			FUZZ_CHECK(r == ((v == 0) == (m->fd >= 0) ? IPC_OK :
			    IPC_E_FD));
		}
		break;
	default:
		abort();	/* decode accepted an unknown type */
	}
	FUZZ_CHECK(!re.overflow);
	FUZZ_CHECK(re.len == m->rpos);
	FUZZ_CHECK(memcmp(re.payload, m->payload, re.len) == 0);
	/* Leftover bytes after the last field are what get_end reports. */
	if (ok)
		FUZZ_CHECK(ipc_get_end(m) ==
		    (m->rpos == m->len ? IPC_OK : IPC_E_LONG));
}

/* Getters in an order chosen by the input: no sequence may misbehave. */
static void
walk_any(struct ipc_msg *m, const uint8_t *ops, size_t nops)
{
	static const size_t maxlens[] = { 0, 1, 3, 16, IPC_MAX_USER,
	    IPC_MAX_LOGMSG, IPC_MAX_PAYLOAD };
	struct ipc_msg scratch;
	size_t i;
	uint32_t v;

	ipc_init(&scratch, IPC_LOG);
	m->rpos = 0;
	for (i = 0; i < nops && i < 64; i++) {
		if (ops[i] & 1)
			(void)walk_u32(m, &v, &scratch);
		else
			(void)walk_str(m, maxlens[(ops[i] >> 1) %
			    (sizeof(maxlens) / sizeof(maxlens[0]))], &scratch);
	}
	/* Failed getters do not move the cursor, so what was read is a
	 * prefix of the payload, and writing it back reproduces it. */
	FUZZ_CHECK(!scratch.overflow);
	FUZZ_CHECK(scratch.len == m->rpos);
	FUZZ_CHECK(memcmp(scratch.payload, m->payload, scratch.len) == 0);
}

static void
check_reencode(const struct ipc_msg *m, const uint8_t *dgram, size_t n)
{
	unsigned char out[IPC_MAX_MSG];
	int r = ipc_encode(m, out, sizeof(out));

	FUZZ_CHECK(r >= 0);
	FUZZ_CHECK((size_t)r == n);
	FUZZ_CHECK(memcmp(out, dgram, n) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_msg m;	/* on the stack: ASan redzones around it */
	const struct ipc_schema *s;
	const uint8_t *dgram;
	size_t n;
	int has_fd, r;

	if (size == 0)
		return 0;
	has_fd = data[0] & 1;
	dgram = data + 1;
	n = size - 1;

	r = ipc_decode(dgram, n, has_fd, &m);
	if (r != IPC_OK) {
		FUZZ_CHECK(r == IPC_E_SHORT || r == IPC_E_LONG ||
		    r == IPC_E_TYPE || r == IPC_E_RESERVED || r == IPC_E_FD);
		FUZZ_CHECK(ipc_strerror(r) != NULL);
		/* Whatever was rejected, the getters still stay in bounds on
		 * an arbitrary payload. */
		ipc_init(&m, IPC_LOG);
		m.len = (uint32_t)(n < IPC_MAX_PAYLOAD ? n : IPC_MAX_PAYLOAD);
		memcpy(m.payload, dgram, m.len);
		walk_any(&m, dgram, n);
		return 0;
	}

	FUZZ_CHECK(m.type > IPC_NONE && m.type < IPC_TYPE_COUNT);
	s = &ipc_schemas[m.type];
	FUZZ_CHECK(m.len <= s->max_payload);
	FUZZ_CHECK(n == IPC_HDR_LEN + (size_t)m.len);
	FUZZ_CHECK(m.rpos == 0 && m.fd == -1 && !m.overflow);
	FUZZ_CHECK(!(s->fd == IPC_FD_NEVER && has_fd));
	FUZZ_CHECK(!(s->fd == IPC_FD_ALWAYS && !has_fd));
	check_reencode(&m, dgram, n);

	/* As ipc_recv would: the descriptor is stored after decoding. */
	m.fd = has_fd ? FUZZ_FAKE_FD : -1;
	walk_schema(&m);
	walk_any(&m, m.payload, m.len);
	return 0;
}
