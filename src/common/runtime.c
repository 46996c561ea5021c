#include "src/common/runtime.h"

struct tw_runtime tw_rt = { .netns_fd = -1, .login_note_fd = -1 };
