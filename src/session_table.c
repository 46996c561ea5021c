#include "src/session_table.h"

#include <netinet/in.h>
#include <string.h>

#include "src/common/hashtab.h"
#include "src/common/util.h"

/*
 * Room before the tables first grow. They grow by doubling and never
 * shrink: a listener that once served a burst keeps the memory for the
 * next one.
 */
#define SESSIONS_INITIAL 512

static struct hashtab *by_pid;		/* pid_t -> struct addr_key */
static struct hashtab *per_addr;	/* struct addr_key -> unsigned count */

void
addr_key_of(const struct sockaddr_storage *ss, struct addr_key *k)
{
	memset(k, 0, sizeof(*k));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		k->b[10] = 0xff;
		k->b[11] = 0xff;
		memcpy(&k->b[12], &in->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(k->b, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	}
}

void
sessions_init(void)
{
	by_pid = hashtab_new(sizeof(pid_t), sizeof(struct addr_key), SESSIONS_INITIAL);
	per_addr = hashtab_new(sizeof(struct addr_key), sizeof(unsigned), SESSIONS_INITIAL);
	if (by_pid == NULL || per_addr == NULL)
		die("out of memory for the session table");
}

/* One session fewer of address a. */
static void
per_addr_drop(const struct addr_key *a)
{
	unsigned *count = hashtab_find(per_addr, a);

	if (count != NULL && --*count == 0)
		(void)hashtab_delete(per_addr, a);
}

void
sessions_add(pid_t pid, const struct addr_key *a)
{
	struct addr_key *addr = hashtab_insert(by_pid, &pid);
	unsigned *count;

	if (addr == NULL)
		die("out of memory for the session table");
	*addr = *a;
	count = hashtab_insert(per_addr, a);
	if (count == NULL)
		die("out of memory for the session table");
	(*count)++;
}

int
sessions_remove(pid_t pid, struct addr_key *addr)
{
	const struct addr_key *a = hashtab_find(by_pid, &pid);

	if (a == NULL)
		return -1;
	*addr = *a;
	(void)hashtab_delete(by_pid, &pid);
	per_addr_drop(addr);
	return 0;
}

int
sessions_move(pid_t pid, const struct addr_key *a)
{
	struct addr_key *cur = hashtab_find(by_pid, &pid);
	unsigned *count;

	if (cur == NULL)
		return -1;
	per_addr_drop(cur);
	*cur = *a;
	count = hashtab_insert(per_addr, a);
	if (count == NULL)
		die("out of memory for the session table");
	(*count)++;
	return 0;
}

int
sessions_has(pid_t pid)
{
	return hashtab_find(by_pid, &pid) != NULL;
}

size_t
sessions_count(void)
{
	return hashtab_count(by_pid);
}

unsigned
sessions_from(const struct addr_key *a)
{
	const unsigned *count = hashtab_find(per_addr, a);

	return count != NULL ? *count : 0;
}

pid_t
sessions_next(size_t *pos)
{
	const void *key = hashtab_next(by_pid, pos, NULL);
	pid_t pid;

	if (key == NULL)
		return 0;
	memcpy(&pid, key, sizeof(pid));
	return pid;
}
