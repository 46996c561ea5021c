/*
 * The check of a struct auth_user received from another process. Pure:
 * part of the core library, so the unit tests and fuzz targets link it.
 */
#include "privsep/auth.h"

#include <string.h>

static int
terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

int
auth_user_check(const struct auth_user *u)
{
	unsigned r;

	if (!terminated(u->name, sizeof(u->name)) || u->name[0] == '\0')
		return -1;
	if (!terminated(u->chroot_dir, sizeof(u->chroot_dir)) ||
	    !terminated(u->start_dir, sizeof(u->start_dir)))
		return -1;
	/* A root session would defeat every wall (fill_user refuses it too). */
	if (u->uid == 0 || u->gid == 0)
		return -1;
	if (u->ngroups < 0 || u->ngroups > AUTH_MAX_GROUPS)
		return -1;
	if (u->chroot_dir[0] != '\0' && u->chroot_dir[0] != '/')
		return -1;
	if (u->start_dir[0] != '/')
		return -1;
	if (u->anonymous != 0 && u->anonymous != 1)
		return -1;
	if ((u->guest != 0 && u->guest != 1) || (u->own_config != 0 && u->own_config != 1))
		return -1;
	if ((u->umask & ~(mode_t)0777) != 0)
		return -1;
	if ((u->rlim_set & ~((1U << AUTH_RLIMITS) - 1)) != 0)
		return -1;
	for (r = 0; r < AUTH_RLIMITS; r++)
		if ((u->rlim_set & (1U << r)) != 0 && u->rlim[r].rlim_cur > u->rlim[r].rlim_max)
			return -1;
	return 0;
}
