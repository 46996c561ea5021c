/*
 * A stand-in for libFuzzer so that every fuzz target also runs as an
 * ordinary, deterministic test in every build:
 *
 *   fuzz_X [count [corpus_dir]]
 *
 * feeds LLVMFuzzerTestOneInput the built-in seeds, then `count` (default
 * 10000) pseudo-random inputs from a fixed seed (half random bytes, half
 * mutated seeds), then every regular file in corpus_dir. A failure is a
 * crash or an abort() in the target, so reaching the end means all passed.
 * Each input lives in its own exactly-sized heap block, so ASan catches a
 * read one byte past the end.
 *
 * Left out (-DTW_LIBFUZZER) when the targets are linked with libFuzzer.
 */
#ifndef TW_LIBFUZZER

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Twice the largest IPC message and a bit: long enough for any target. */
#define DRIVER_MAX_LEN (2 * 4096 + 16)
/* Corpus files are cut here; targets get no more than libFuzzer's -max_len. */
#define DRIVER_MAX_FILE (1024 * 1024)
#define DRIVER_DEFAULT_COUNT 10000

struct seed {
	const char *data;
	size_t len;
};

#define SEED(s) { s, sizeof(s) - 1 }

/*
 * Shapes worth starting from. The IPC ones begin with the flag byte that
 * fuzz_ipc reads (bit 0: a descriptor came along), then a real header.
 * The others are what the FTP argument and config parsers see.
 */
static const struct seed seeds[] = {
	/* IPC_LOGIN: user "alice", pass "" */
	SEED("\x00" "\x01\x00\x00\x00\x0d\x00\x00\x00"
	    "\x05\x00\x00\x00" "alice" "\x00\x00\x00\x00"),
	/* IPC_LOG: level 6, "abc" */
	SEED("\x00" "\x02\x00\x00\x00\x0b\x00\x00\x00"
	    "\x06\x00\x00\x00" "\x03\x00\x00\x00" "abc"),
	/* IPC_PORT20_CONNECT 20 */
	SEED("\x00" "\x03\x00\x00\x00\x04\x00\x00\x00" "\x14\x00\x00\x00"),
	/* IPC_LOGIN_RESULT fail */
	SEED("\x00" "\x04\x00\x00\x00\x04\x00\x00\x00" "\x01\x00\x00\x00"),
	/* IPC_FD_RESULT ok, with a descriptor */
	SEED("\x01" "\x05\x00\x00\x00\x04\x00\x00\x00" "\x00\x00\x00\x00"),
	/* IPC_FD_RESULT ECONNREFUSED, none */
	SEED("\x00" "\x05\x00\x00\x00\x04\x00\x00\x00" "\x6f\x00\x00\x00"),
	/* FTP arguments */
	SEED("127,0,0,1,4,1"),
	SEED("|1|192.168.1.10|1025|"),
	SEED("|2|::ffff:10.0.0.1|65535|"),
	SEED("ALL"),
	SEED("-la /pub/incoming"),
	SEED("/home/\"quoted\"/dir/../x"),
	/* config lines */
	SEED("listen=YES\nanonymous_enable=NO\nmax_clients=2000\n"
	    "local_root=/srv/ftp\nlocal_umask=022\n"),
	SEED("pasv_min_port=40000\npasv_max_port=40100\n#comment\n\n"),
	/* PROXY protocol headers: version 1, version 2 PROXY over IPv4, LOCAL */
	SEED("PROXY TCP4 192.0.2.7 198.51.100.1 56324 21\r\nUSER a\r\n"),
	SEED("PROXY TCP6 2001:db8::7 ::1 1 21\r\n"),
	SEED("\r\n\r\n\0\r\nQUIT\n" "\x21\x11\x00\x0c"
	    "\x0a\x00\x00\x07\x0a\x00\x00\x01\xdc\x04\x00\x15"),
	SEED("\r\n\r\n\0\r\nQUIT\n" "\x20\x00\x00\x00"),
};

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

/* xorshift64: tiny, deterministic, good enough to shake parsers. */
static uint64_t
rng_next(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

/* Uniform enough in [0, n); n > 0. */
static size_t
rng_below(size_t n)
{
	return (size_t)(rng_next() % n);
}

static unsigned long run_count;

static void
run_one(const unsigned char *data, size_t len)
{
	/* An exact-size copy: a read past the end is a heap overflow. */
	unsigned char *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL) {
		perror("malloc");
		exit(2);
	}
	if (len > 0)
		memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	run_count++;
}

/* Bytes that parsers of text care about, to get past their first check. */
static unsigned char
rng_text_byte(void)
{
	static const char alpha[] = "0123456789,.|:=-/ \r\n#aAlLxyzYESNO\"";

	return (unsigned char)alpha[rng_below(sizeof(alpha) - 1)];
}

static void
random_input(unsigned char *buf)
{
	/* Mostly short inputs: long ones are slow and rarely find more. */
	static const size_t classes[] = { 16, 64, 512, 4096 + 16,
	    DRIVER_MAX_LEN };
	size_t cls = classes[rng_below(sizeof(classes) / sizeof(classes[0]))];
	size_t len = rng_below(cls + 1), i;
	int text = (rng_next() & 1) != 0;

	for (i = 0; i < len; i++)
		buf[i] = text ? rng_text_byte() : (unsigned char)rng_next();
	run_one(buf, len);
}

static void
put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)((v >> 8) & 0xff);
	p[2] = (unsigned char)((v >> 16) & 0xff);
	p[3] = (unsigned char)(v >> 24);
}

/* One mutation of buf[0..*len), which has room for DRIVER_MAX_LEN. */
static void
mutate(unsigned char *buf, size_t *len)
{
	static const unsigned char bytes[] = { 0, 1, 0x7f, 0x80, 0xff, '\n',
	    '\r', ',', '|', '=', '.', '9' };
	static const uint32_t words[] = { 0, 1, 3, 4, 5, 8, 255, 256, 257,
	    1024, 1025, 4095, 4096, 4097, 0x7fffffff, 0x80000000, 0xfffffff8,
	    0xffffffff };
	size_t n = *len, pos, k;

	switch (rng_below(9)) {
	case 0:	/* flip one bit */
		if (n > 0)
			buf[rng_below(n)] ^= (unsigned char)(1u << rng_below(8));
		break;
	case 1:	/* an interesting byte */
		if (n > 0)
			buf[rng_below(n)] = bytes[rng_below(sizeof(bytes))];
		break;
	case 2:	/* insert a byte */
		if (n < DRIVER_MAX_LEN) {
			pos = rng_below(n + 1);
			memmove(buf + pos + 1, buf + pos, n - pos);
			buf[pos] = (unsigned char)rng_next();
			*len = n + 1;
		}
		break;
	case 3:	/* delete a byte */
		if (n > 0) {
			pos = rng_below(n);
			memmove(buf + pos, buf + pos + 1, n - pos - 1);
			*len = n - 1;
		}
		break;
	case 4:	/* truncate */
		*len = rng_below(n + 1);
		break;
	case 5:	/* append random bytes */
		k = rng_below(65);
		if (k > DRIVER_MAX_LEN - n)
			k = DRIVER_MAX_LEN - n;
		for (pos = 0; pos < k; pos++)
			buf[n + pos] = (unsigned char)rng_next();
		*len = n + k;
		break;
	case 6:	/* an interesting little-endian u32 (lengths, types) */
		if (n >= 4)
			put_le32(buf + rng_below(n - 3),
			    words[rng_below(sizeof(words) / sizeof(words[0]))]);
		break;
	case 7:	/* repeat the input: grows it towards the size limits */
		k = n < DRIVER_MAX_LEN - n ? n : DRIVER_MAX_LEN - n;
		memcpy(buf + n, buf, k);
		*len = n + k;
		break;
	case 8:
		/*
		 * Make an IPC header's length agree with the bytes after it
		 * (flag byte + 8-byte header), so mutated payloads get past
		 * the framing checks and reach the getters.
		 */
		if (n >= 9)
			put_le32(buf + 5, (uint32_t)(n - 9));
		break;
	}
}

static void
mutated_input(unsigned char *buf)
{
	const struct seed *s = &seeds[rng_below(sizeof(seeds) / sizeof(seeds[0]))];
	size_t len = s->len, rounds = 1 + rng_below(8), i;

	memcpy(buf, s->data, len);
	for (i = 0; i < rounds; i++)
		mutate(buf, &len);
	run_one(buf, len);
}

static int
run_file(const char *path)
{
	static unsigned char fbuf[DRIVER_MAX_FILE];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(fbuf, 1, sizeof(fbuf), f);
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	run_one(fbuf, n);
	return 0;
}

static int
run_corpus(const char *dir)
{
	struct dirent *e;
	struct stat st;
	char path[4096];
	DIR *d;
	int rc = 0;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;	/* optional: no corpus given */
	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		int len = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);

		if (len < 0 || (size_t)len >= sizeof(path))
			continue;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (run_file(path) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

static int
parse_count(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

int
main(int argc, char **argv)
{
	static unsigned char buf[DRIVER_MAX_LEN];
	unsigned long count = DRIVER_DEFAULT_COUNT, i;
	size_t s;

	if (argc > 1 && parse_count(argv[1], &count) != 0) {
		fprintf(stderr, "usage: %s [count [corpus_dir]]\n", argv[0]);
		return 2;
	}
	for (s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		run_one((const unsigned char *)seeds[s].data, seeds[s].len);
	for (i = 0; i < count; i++) {
		if (i % 2 == 0)
			random_input(buf);
		else
			mutated_input(buf);
	}
	if (argc > 2 && run_corpus(argv[2]) != 0)
		return 2;
	printf("%lu passed, 0 failed\n", run_count);
	return 0;
}

#endif /* TW_LIBFUZZER */
