/*
 * Log lines of a sandboxed process: it cannot open the log, so each line
 * travels to its monitor as an IPC_LOG message, which the monitor checks
 * and writes (log_from_worker()).
 */
#include "privsep/ipc.h"

#include <string.h>

#include "src/common/log.h"
#include "src/common/util.h"

/* Written by every session process: TW_PER_PROCESS (src/common/util.h). */
static int log_sock TW_PER_PROCESS = -1;

static void
ipc_log_sink(int level, const char *text)
{
	struct ipc_msg m;

	ipc_init(&m, IPC_LOG);
	ipc_put_u32(&m, (uint32_t)level);
	ipc_put_str(&m, text, strlen(text));
	(void)ipc_send(log_sock, &m);
}

void
ipc_log_to(int sock)
{
	log_sock = sock;
	log_to_sink(ipc_log_sink);
}
