#include "src/common/runtime.h"

struct tw_runtime tw_rt;
