#include "src/session_table.h"

#include <netinet/in.h>
#include <string.h>

#include "src/common/hashtab.h"
#include "src/common/monotime.h"
#include "src/common/util.h"

/*
 * Room before the tables first grow. They grow by doubling and never
 * shrink: a listener that once served a burst keeps the memory for the
 * next one.
 */
#define SESSIONS_INITIAL 512

static struct hashtab *by_pid;		/* pid_t -> struct session_info */
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
	by_pid = hashtab_new(sizeof(pid_t), sizeof(struct session_info), SESSIONS_INITIAL);
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
	struct session_info *info = hashtab_insert(by_pid, &pid);
	unsigned *count;

	if (info == NULL)
		die("out of memory for the session table");
	memset(info, 0, sizeof(*info));
	info->addr = *a;
	info->since_ms = tw_mono_ms();
	count = hashtab_insert(per_addr, a);
	if (count == NULL)
		die("out of memory for the session table");
	(*count)++;
}

int
sessions_remove(pid_t pid, struct addr_key *addr)
{
	const struct session_info *info = hashtab_find(by_pid, &pid);

	if (info == NULL)
		return -1;
	*addr = info->addr;
	(void)hashtab_delete(by_pid, &pid);
	per_addr_drop(addr);
	return 0;
}

int
sessions_move(pid_t pid, const struct addr_key *a)
{
	struct session_info *info = hashtab_find(by_pid, &pid);
	unsigned *count;

	if (info == NULL)
		return -1;
	per_addr_drop(&info->addr);
	info->addr = *a;
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
	return sessions_next_info(pos, NULL);
}

pid_t
sessions_next_info(size_t *pos, struct session_info *info)
{
	void *val;
	const void *key = hashtab_next(by_pid, pos, &val);
	pid_t pid;

	if (key == NULL)
		return 0;
	memcpy(&pid, key, sizeof(pid));
	if (info != NULL)
		*info = *(const struct session_info *)val;
	return pid;
}

void
sessions_set_login(pid_t pid, const char *user, int anonymous)
{
	struct session_info *info = hashtab_find(by_pid, &pid);
	size_t len = strlen(user);

	if (info == NULL)
		return;
	info->logged_in = 1;
	info->anonymous = anonymous;
	if (tw_strlcpy(info->user, user, sizeof(info->user)) != 0 || len > SESSION_USER_MAX)
		info->user[SESSION_USER_MAX - 1] = '+';
}

const struct addr_key *
sessions_next_addr(size_t *pos, unsigned *count)
{
	void *val;
	const void *key = hashtab_next(per_addr, pos, &val);

	if (key == NULL)
		return NULL;
	*count = *(const unsigned *)val;
	return key;
}
