#include "src/common/runtime.h"

#include <stdlib.h>

struct tw_runtime tw_rt = { .netns_fd = -1, .login_note_fd = -1 };

static int
cmp_id(const void *key, const void *elem)
{
	unsigned id = *(const unsigned *)key, e = ((const struct tw_idname *)elem)->id;

	return id < e ? -1 : id > e;
}

const char *
tw_rt_id_name(unsigned id, int is_group)
{
	const struct tw_idname *t = is_group ? tw_rt.group_names : tw_rt.user_names;
	size_t n = is_group ? tw_rt.n_group_names : tw_rt.n_user_names;
	const struct tw_idname *hit = t != NULL ? bsearch(&id, t, n, sizeof(*t), cmp_id) : NULL;

	return hit != NULL ? hit->name : NULL;
}
