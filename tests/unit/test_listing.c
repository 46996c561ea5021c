/*
 * Unit tests for src/proto/listing.c. The LIST lines are compared byte for byte
 * with what vsftpd 3.0 printed for the same files (checked against a real
 * vsftpd LIST): clients parse these columns, so any drift is a bug.
 */
#include "src/proto/listing.h"

#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "check.h"

#define NOW	((time_t)1718452800)	/* 2024-06-15 12:00:00 UTC */
#define RECENT	((time_t)1717254245)	/* 2024-06-01 15:04:05 UTC */
#define OLD	((time_t)1551675967)	/* 2019-03-04 05:06:07 UTC */
#define HALF_YEAR ((time_t)15778476)

static struct stat
mkstat(mode_t mode, nlink_t nlink, uid_t uid, gid_t gid, off_t size, time_t mtime)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = mode;
	st.st_nlink = nlink;
	st.st_uid = uid;
	st.st_gid = gid;
	st.st_size = size;
	st.st_mtime = mtime;
	st.st_dev = 0x801;
	st.st_ino = 0x1a2;
	return st;
}

static const char *
lng(const char *name, const struct stat *st, const char *target, int hide)
{
	static char buf[512];
	struct list_opts o = { .hide_ids = hide, .now = NOW };

	if (list_format_long(buf, sizeof(buf), name, st, target, &o) < 0)
		return NULL;
	return buf;
}

static void
test_long(void)
{
	struct stat st;
	struct list_opts o = { .now = NOW };
	char buf[128];
	int n;

	st = mkstat(S_IFREG | 0644, 1, 1000, 1000, 1234, RECENT);
	CHECK_STR(lng("name", &st, NULL, 0),
	    "-rw-r--r--    1 1000     1000         1234 Jun 01 15:04 name");
	CHECK_STR(lng("name", &st, NULL, 1),
	    "-rw-r--r--    1 ftp      ftp          1234 Jun 01 15:04 name");
	CHECK_STR(lng("with space", &st, NULL, 0),
	    "-rw-r--r--    1 1000     1000         1234 Jun 01 15:04 with space");

	st = mkstat(S_IFDIR | 0755, 2, 0, 0, 4096, RECENT);
	CHECK_STR(lng("sub", &st, NULL, 0),
	    "drwxr-xr-x    2 0        0            4096 Jun 01 15:04 sub");

	st = mkstat(S_IFLNK | 0777, 1, 0, 0, 4, RECENT);
	CHECK_STR(lng("link", &st, "file", 0),
	    "lrwxrwxrwx    1 0        0               4 Jun 01 15:04 link -> file");

	st = mkstat(S_IFREG | 04755, 1, 0, 0, 6, RECENT);
	CHECK_STR(lng("file", &st, NULL, 0),
	    "-rwsr-xr-x    1 0        0               6 Jun 01 15:04 file");
	st = mkstat(S_IFREG | 06644, 1, 1000, 1000, 0, RECENT);
	CHECK_STR(lng("suid", &st, NULL, 0),
	    "-rwSr-Sr--    1 1000     1000            0 Jun 01 15:04 suid");
	st = mkstat(S_IFREG | 02755, 1, 1000, 1000, 0, RECENT);
	CHECK_STR(lng("sgid", &st, NULL, 0),
	    "-rwxr-sr-x    1 1000     1000            0 Jun 01 15:04 sgid");

	st = mkstat(S_IFDIR | 01777, 2, 0, 0, 4096, RECENT);
	CHECK_STR(lng("sticky", &st, NULL, 0),
	    "drwxrwxrwt    2 0        0            4096 Jun 01 15:04 sticky");
	st = mkstat(S_IFDIR | 01770, 2, 0, 0, 4096, RECENT);
	CHECK_STR(lng("sticky", &st, NULL, 0),
	    "drwxrwx--T    2 0        0            4096 Jun 01 15:04 sticky");

	st = mkstat(S_IFCHR | 0620, 1, 0, 5, 0, RECENT);
	st.st_rdev = makedev(4, 64);
	CHECK_STR(lng("tty0", &st, NULL, 0),
	    "crw--w----    1 0        5          4,  64 Jun 01 15:04 tty0");
	st = mkstat(S_IFBLK | 0660, 1, 0, 6, 0, RECENT);
	st.st_rdev = makedev(259, 1);
	CHECK_STR(lng("nvme", &st, NULL, 0),
	    "brw-rw----    1 0        6        259,   1 Jun 01 15:04 nvme");
	st = mkstat(S_IFIFO | 0644, 1, 0, 0, 0, RECENT);
	CHECK_STR(lng("fifo", &st, NULL, 0),
	    "prw-r--r--    1 0        0               0 Jun 01 15:04 fifo");
	st = mkstat(S_IFSOCK | 0755, 1, 0, 0, 0, RECENT);
	CHECK_STR(lng("sock", &st, NULL, 0),
	    "srwxr-xr-x    1 0        0               0 Jun 01 15:04 sock");

	/* Old and future files show the year, two spaces before it. */
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, OLD);
	CHECK_STR(lng("old", &st, NULL, 0),
	    "-rw-r--r--    1 0        0               0 Mar 04  2019 old");
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, NOW + 60);
	CHECK_STR(lng("future", &st, NULL, 0),
	    "-rw-r--r--    1 0        0               0 Jun 15  2024 future");
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, NOW);
	CHECK_STR(lng("now", &st, NULL, 0),
	    "-rw-r--r--    1 0        0               0 Jun 15 12:00 now");
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, NOW - HALF_YEAR);
	CHECK_STR(lng("edge", &st, NULL, 0),
	    "-rw-r--r--    1 0        0               0 Dec 15 21:05 edge");
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, NOW - HALF_YEAR - 1);
	CHECK_STR(lng("edge", &st, NULL, 0),
	    "-rw-r--r--    1 0        0               0 Dec 15  2023 edge");

	/* Wide columns push the rest right, as in vsftpd. */
	st = mkstat(S_IFREG | 0644, 12345, 4294967294u, 65534, 123456789012LL, RECENT);
	CHECK_STR(lng("big", &st, NULL, 0),
	    "-rw-r--r-- 12345 4294967294 65534    123456789012 Jun 01 15:04 big");

	/* Hostile mtimes must not crash or overflow. */
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, (time_t)1 << 62);
	CHECK(lng("far", &st, NULL, 0) != NULL);
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, -((time_t)1 << 62));
	CHECK(lng("far", &st, NULL, 0) != NULL);

	/* Local time: TZ "XYZ-2" is two hours east of UTC. */
	setenv("TZ", "XYZ-2", 1);
	tzset();
	o.use_localtime = 1;
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 0, RECENT);
	CHECK(list_format_long(buf, sizeof(buf), "t", &st, NULL, &o) > 0);
	CHECK_STR(buf, "-rw-r--r--    1 0        0               0 Jun 01 17:04 t");
	o.use_localtime = 0;

	/* Exactly fitting, and one byte short. */
	n = list_format_long(buf, sizeof(buf), "t", &st, NULL, &o);
	CHECK_INT(n, 57);
	CHECK_INT(list_format_long(buf, (size_t)n + 1, "t", &st, NULL, &o), n);
	CHECK_INT(list_format_long(buf, (size_t)n, "t", &st, NULL, &o), -1);
	CHECK_INT(list_format_long(buf, (size_t)n + 4, "t", &st, "x", &o), -1);
	CHECK_INT(list_format_long(buf, (size_t)n + 6, "t", &st, "x", &o), n + 5);
	CHECK_INT(list_format_long(buf, 0, "t", &st, NULL, &o), -1);
}

static const char *
mlst(const char *name, const struct stat *st, enum mlst_kind kind,
     unsigned facts, int can_write)
{
	static char buf[512];

	if (list_format_mlst(buf, sizeof(buf), name, st, kind, facts, can_write) < 0)
		return NULL;
	return buf;
}

static void
test_mlst(void)
{
	struct stat st;
	char buf[128];
	int n;

	st = mkstat(S_IFREG | 0644, 1, 0, 0, 1234, RECENT);
	CHECK_STR(mlst("name", &st, MLST_KIND_ENTRY, MLST_ALL, 0),
	    "type=file;size=1234;modify=20240601150405;perm=r;unique=801g1a2;"
	    "UNIX.mode=0644; name");
	CHECK_STR(mlst("name", &st, MLST_KIND_ENTRY, MLST_ALL, 1),
	    "type=file;size=1234;modify=20240601150405;perm=rwadf;unique=801g1a2;"
	    "UNIX.mode=0644; name");
	CHECK_STR(mlst("a b;c", &st, MLST_KIND_ENTRY, MLST_TYPE | MLST_SIZE, 0),
	    "type=file;size=1234; a b;c");
	CHECK_STR(mlst("name", &st, MLST_KIND_ENTRY, 0, 0), " name");
	CHECK_STR(mlst("name", &st, MLST_KIND_ENTRY, MLST_UNIX_MODE | MLST_PERM, 1),
	    "perm=rwadf;UNIX.mode=0644; name");

	/* Owner cannot write: no modifying permissions even with can_write. */
	st = mkstat(S_IFREG | 0444, 1, 0, 0, 0, RECENT);
	CHECK_STR(mlst("ro", &st, MLST_KIND_ENTRY, MLST_PERM, 1), "perm=r; ro");
	st = mkstat(S_IFREG | 0200, 1, 0, 0, 0, RECENT);
	CHECK_STR(mlst("wo", &st, MLST_KIND_ENTRY, MLST_PERM, 1), "perm=wadf; wo");
	CHECK_STR(mlst("wo", &st, MLST_KIND_ENTRY, MLST_PERM, 0), "perm=; wo");

	st = mkstat(S_IFREG | 04755, 1, 0, 0, 6, RECENT);
	CHECK_STR(mlst("suid", &st, MLST_KIND_ENTRY, MLST_UNIX_MODE, 0),
	    "UNIX.mode=4755; suid");

	st = mkstat(S_IFDIR | 0755, 2, 0, 0, 4096, RECENT);
	CHECK_STR(mlst("sub", &st, MLST_KIND_ENTRY, MLST_ALL, 0),
	    "type=dir;modify=20240601150405;perm=el;unique=801g1a2;"
	    "UNIX.mode=0755; sub");
	CHECK_STR(mlst("sub", &st, MLST_KIND_ENTRY, MLST_ALL, 1),
	    "type=dir;modify=20240601150405;perm=elcmpdf;unique=801g1a2;"
	    "UNIX.mode=0755; sub");
	CHECK_STR(mlst(".", &st, MLST_KIND_CDIR, MLST_TYPE | MLST_SIZE, 0),
	    "type=cdir; .");
	CHECK_STR(mlst("..", &st, MLST_KIND_PDIR, MLST_TYPE | MLST_PERM, 1),
	    "type=pdir;perm=elcmpdf; ..");
	st = mkstat(S_IFDIR | 0555, 2, 0, 0, 4096, RECENT);
	CHECK_STR(mlst("ro", &st, MLST_KIND_ENTRY, MLST_PERM, 1), "perm=el; ro");

	st = mkstat(S_IFIFO | 0644, 1, 0, 0, 0, RECENT);
	CHECK_STR(mlst("fifo", &st, MLST_KIND_ENTRY, MLST_TYPE | MLST_SIZE, 0),
	    "type=OS.unix=special; fifo");
	st = mkstat(S_IFLNK | 0777, 1, 0, 0, 4, RECENT);
	CHECK_STR(mlst("lnk", &st, MLST_KIND_ENTRY, MLST_TYPE | MLST_SIZE, 0),
	    "type=OS.unix=special; lnk");

	/* A time that has no 4-digit year is left out, not faked. */
	st = mkstat(S_IFREG | 0644, 1, 0, 0, 1, (time_t)253402300800LL);
	CHECK_STR(mlst("y10k", &st, MLST_KIND_ENTRY, MLST_TYPE | MLST_MODIFY, 0),
	    "type=file; y10k");

	st = mkstat(S_IFREG | 0644, 1, 0, 0, 1, RECENT);
	st.st_dev = 0;
	st.st_ino = 0xffffffffffffffffULL;
	CHECK_STR(mlst("u", &st, MLST_KIND_ENTRY, MLST_UNIQUE, 0),
	    "unique=0gffffffffffffffff; u");

	n = list_format_mlst(buf, sizeof(buf), "u", &st, MLST_KIND_ENTRY,
	    MLST_ALL, 0);
	CHECK(n > 0);
	CHECK_INT(list_format_mlst(buf, (size_t)n + 1, "u", &st, MLST_KIND_ENTRY,
	    MLST_ALL, 0), n);
	CHECK_INT(list_format_mlst(buf, (size_t)n, "u", &st, MLST_KIND_ENTRY,
	    MLST_ALL, 0), -1);
	CHECK_INT(list_format_mlst(buf, 5, "u", &st, MLST_KIND_ENTRY,
	    MLST_ALL, 0), -1);
	CHECK_INT(list_format_mlst(buf, 0, "u", &st, MLST_KIND_ENTRY,
	    MLST_ALL, 0), -1);
}

static void
test_mlst_opts(void)
{
	char out[64], small[8];

	CHECK_INT(list_parse_mlst_opts("type;size;modify;", out, sizeof(out)),
	    MLST_TYPE | MLST_SIZE | MLST_MODIFY);
	CHECK_STR(out, "type;size;modify;");
	CHECK_INT(list_parse_mlst_opts("UNIX.MODE;Type;bogus;x.y;", out, sizeof(out)),
	    MLST_TYPE | MLST_UNIX_MODE);
	CHECK_STR(out, "type;UNIX.mode;");
	CHECK_INT(list_parse_mlst_opts("size;type", out, sizeof(out)),
	    MLST_TYPE | MLST_SIZE);
	CHECK_STR(out, "type;size;");
	CHECK_INT(list_parse_mlst_opts("perm;;;perm;unique;", out, sizeof(out)),
	    MLST_PERM | MLST_UNIQUE);
	CHECK_STR(out, "perm;unique;");
	CHECK_INT(list_parse_mlst_opts("", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_INT(list_parse_mlst_opts(NULL, out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_INT(list_parse_mlst_opts("typo;sizes;typ;", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_INT(list_parse_mlst_opts("type;size;modify;perm;unique;unix.mode;",
	    out, sizeof(out)), MLST_ALL);
	CHECK_STR(out, "type;size;modify;perm;unique;UNIX.mode;");
	CHECK_INT(list_parse_mlst_opts(" type;", out, sizeof(out)), 0);
	/* Too small for the reply: mask still right, reply empty. */
	CHECK_INT(list_parse_mlst_opts("type;size;", small, sizeof(small)),
	    MLST_TYPE | MLST_SIZE);
	CHECK_STR(small, "");
	CHECK_INT(list_parse_mlst_opts("size;", small, sizeof(small)), MLST_SIZE);
	CHECK_STR(small, "size;");
	CHECK_INT(list_parse_mlst_opts("size;", small, 0), MLST_SIZE);
}

static void
test_mlst_feat(void)
{
	char buf[64];

	CHECK_INT(list_format_mlst_feat(buf, sizeof(buf), MLST_ALL), 45);
	CHECK_STR(buf, "type*;size*;modify*;perm*;unique*;UNIX.mode*;");
	CHECK(list_format_mlst_feat(buf, sizeof(buf), MLST_TYPE | MLST_SIZE) > 0);
	CHECK_STR(buf, "type*;size*;modify;perm;unique;UNIX.mode;");
	CHECK(list_format_mlst_feat(buf, sizeof(buf), 0) > 0);
	CHECK_STR(buf, "type;size;modify;perm;unique;UNIX.mode;");
	CHECK_INT(list_format_mlst_feat(buf, 45, MLST_ALL), -1);
	CHECK_INT(list_format_mlst_feat(buf, 46, MLST_ALL), 45);
	CHECK_INT(list_format_mlst_feat(buf, 0, MLST_ALL), -1);
}

static void
test_mdtm(void)
{
	char buf[32];

	CHECK_INT(list_format_mdtm(buf, sizeof(buf), 0, 0), 14);
	CHECK_STR(buf, "19700101000000");
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)1704207845, 0), 14);
	CHECK_STR(buf, "20240102150405");
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), -1, 0), 14);
	CHECK_STR(buf, "19691231235959");
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)253402300799LL, 0), 14);
	CHECK_STR(buf, "99991231235959");
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)253402300800LL, 0), -1);
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)-62167219200LL, 0), 14);
	CHECK_STR(buf, "00000101000000");
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)-62167219201LL, 0), -1);
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)1 << 62, 0), -1);
	CHECK_INT(list_format_mdtm(buf, 15, (time_t)1704207845, 0), 14);
	CHECK_INT(list_format_mdtm(buf, 14, (time_t)1704207845, 0), -1);
	setenv("TZ", "XYZ-2", 1);
	tzset();
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)1704207845, 1), 14);
	CHECK_STR(buf, "20240102170405");
	CHECK_INT(list_format_mdtm(buf, sizeof(buf), (time_t)1704207845, 0), 14);
	CHECK_STR(buf, "20240102150405");
}

static void
test_scrub(void)
{
	char line[] = "-rw-r--r--    1 ftp      ftp             0 Jun 01 15:04 evil\r\n213 x\ny\r";
	char nlst[] = "a\nb";
	char part[] = "x\ny\n";
	char keep[] = "caf\xc3\xa9 \ttab\x01\x7f\xff";
	const char *want = "-rw-r--r--    1 ftp      ftp             0 Jun 01 15:04 evil??213 x?y?";

	list_scrub_line(line, strlen(line));
	CHECK_STR(line, want);
	list_scrub_line(nlst, strlen(nlst));
	CHECK_STR(nlst, "a?b");
	/* Only CR and LF break a line: UTF-8, tabs and other bytes stay. */
	list_scrub_line(keep, strlen(keep));
	CHECK_STR(keep, "caf\xc3\xa9 \ttab\x01\x7f\xff");
	/* Only the n bytes given are touched. */
	list_scrub_line(part, 2);
	CHECK_STR(part, "x?y\n");
}

/* text_userdb_names: uid 1000 and gid 100 have names, 7 a bad one. */
static const char *
names(unsigned id, int is_group)
{
	if (!is_group && id == 1000)
		return "alice";
	if (is_group && id == 100)
		return "users";
	if (id == 7)
		return is_group ? "has space" : "a-name-longer-than-thirty-two-bytes";
	return NULL;
}

static void
test_long_names(void)
{
	struct list_opts o = { .id_name = names, .now = NOW };
	struct stat st = mkstat(S_IFREG | 0644, 1, 1000, 100, 5, RECENT);
	char buf[256];

	CHECK(list_format_long(buf, sizeof(buf), "f", &st, NULL, &o) > 0);
	CHECK_STR(buf, "-rw-r--r--    1 alice    users           5 Jun 01 15:04 f");
	st = mkstat(S_IFREG | 0644, 1, 7, 7, 5, RECENT);
	CHECK(list_format_long(buf, sizeof(buf), "f", &st, NULL, &o) > 0);
	CHECK_STR(buf, "-rw-r--r--    1 7        7               5 Jun 01 15:04 f");
	st = mkstat(S_IFREG | 0644, 1, 1001, 100, 5, RECENT);
	o.hide_ids = 1;
	CHECK(list_format_long(buf, sizeof(buf), "f", &st, NULL, &o) > 0);
	CHECK_STR(buf, "-rw-r--r--    1 ftp      ftp             5 Jun 01 15:04 f");
}

int
main(void)
{
	test_long();
	test_long_names();
	test_mlst();
	test_mlst_opts();
	test_mlst_feat();
	test_mdtm();
	test_scrub();
	return check_summary();
}
