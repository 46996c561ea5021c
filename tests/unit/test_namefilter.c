/*
 * Unit tests for src/proto/namefilter.c: vsftpd's brace lists, '*' and
 * '?', the path rule (any component, "." and ".." never), and hostile
 * shapes (unbalanced braces, empty patterns, long runs of '*').
 */
#include "src/proto/namefilter.h"

#include <string.h>

#include "check.h"

static int
name(const char *filter, const char *n)
{
	return namefilter_match_name(filter, n, strlen(n));
}

static void
test_globs(void)
{
	const char *f = "{*.mp3,*.mov,.private}";

	CHECK(name(f, "song.mp3"));
	CHECK(name(f, ".mp3"));
	CHECK(name(f, "clip.mov"));
	CHECK(name(f, ".private"));
	CHECK(!name(f, "song.mp4"));
	CHECK(!name(f, "song.mp3.txt"));
	CHECK(!name(f, ".private2"));
	CHECK(!name(f, "private"));
	CHECK(name("a?c", "abc"));
	CHECK(!name("a?c", "ac"));
	CHECK(name("*", ""));
	CHECK(name("*", "anything"));
	CHECK(name("*a*b*c*", "xxaxxbxxcxx"));
	CHECK(!name("*a*b*c*", "xxaxxcxxbxx"));
	CHECK(name("**.txt", "a.txt"));
	CHECK(name("a*", "a"));
	CHECK(!name("a*b", "a"));
	/* Case matters, as on the disk. */
	CHECK(!name("*.MP3", "song.mp3"));
}

static void
test_lists(void)
{
	/* Without braces, a comma list still separates patterns. */
	CHECK(name("*.iso,secret", "secret"));
	CHECK(name("*.iso,secret", "x.iso"));
	CHECK(name("secret", "secret"));
	CHECK(!name("secret", "secrets"));
	/* Empty filters and empty patterns match nothing. */
	CHECK(!name("", ""));
	CHECK(!name("", "a"));
	CHECK(!name("{}", ""));
	CHECK(!name("{}", "{}"));
	CHECK(!name("{,,}", ""));
	CHECK(name("{,a,}", "a"));
	CHECK(!namefilter_match_name(NULL, "a", 1));
	/* Unbalanced or inner braces are literal bytes. */
	CHECK(name("{a", "{a"));
	CHECK(name("a}", "a}"));
	CHECK(name("{x{y}", "x{y"));
	/* The name's length is what counts, not a NUL. */
	CHECK(namefilter_match_name("ab", "abc", 2));
	CHECK(!namefilter_match_name("abc", "abc", 2));
}

static void
test_paths(void)
{
	const char *f = "{.private,*.mp3}";

	CHECK(namefilter_match_path(f, ".private"));
	CHECK(namefilter_match_path(f, ".private/x.txt"));
	CHECK(namefilter_match_path(f, "/pub/.private/x.txt"));
	CHECK(namefilter_match_path(f, "pub//.private/"));
	CHECK(namefilter_match_path(f, "a/../.private/b"));
	CHECK(namefilter_match_path(f, "dir/song.mp3"));
	CHECK(!namefilter_match_path(f, "/pub/private/x.txt"));
	CHECK(!namefilter_match_path(f, "/"));
	CHECK(!namefilter_match_path(f, ""));
	CHECK(!namefilter_match_path("", ".private"));
	CHECK(!namefilter_match_path(NULL, ".private"));
	CHECK(!namefilter_match_path(f, NULL));
	/* "." and ".." are steps: ".*" must not deny CDUP. */
	CHECK(!namefilter_match_path(".*", ".."));
	CHECK(!namefilter_match_path(".*", "./a/../b"));
	CHECK(namefilter_match_path(".*", "../.hidden"));
}

/* The worst shape a client can aim at: stays quick (p * n steps). */
static void
test_bounded(void)
{
	char pat[1024], s[4096];

	memset(pat, '*', sizeof(pat) - 2);
	pat[sizeof(pat) - 2] = 'b';
	pat[sizeof(pat) - 1] = '\0';
	memset(s, 'a', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	CHECK(!name(pat, s));
	s[sizeof(s) - 2] = 'b';
	CHECK(name(pat, s));
}

int
main(void)
{
	test_globs();
	test_lists();
	test_paths();
	test_bounded();
	return check_summary();
}
