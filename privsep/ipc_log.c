/*
 * What a sandboxed process tells its monitor unasked. Log lines: it
 * cannot open the log, so each line travels as an IPC_LOG message, which
 * the monitor checks and writes (log_from_worker()). And the one syscall
 * its filter forbade, as an IPC_SANDBOX_VIOLATION that the monitor names
 * in its log when it reaps the process.
 */
#include "privsep/ipc.h"

#include <string.h>

#include "sandbox/sandbox.h"
#include "src/common/log.h"
#include "src/common/util.h"

/* Written by every session process: TW_PER_PROCESS (src/common/util.h). */
static int log_sock TW_PER_PROCESS = -1;
static int violation_sock TW_PER_PROCESS = -1;

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

/*
 * Runs in the SIGSYS handler: async-signal-safe. The codec only stores
 * into the message and ipc_send_nowait() is one sendmsg(); no
 * allocation, no stdio, no lock. It never waits: a monitor that is busy
 * (PAM, a full queue of log lines) loses the report rather than keep a
 * dying process alive. The message is static (untouched, it costs no
 * memory) so the handler needs little stack. The process dies right
 * after, whatever this returns.
 */
static void
ipc_report_violation(long nr, enum sandbox_role role)
{
	static struct ipc_msg m;

	ipc_init(&m, IPC_SANDBOX_VIOLATION);
	ipc_put_u32(&m, nr >= 0 && (unsigned long)nr < IPC_SYSCALL_UNKNOWN ? (uint32_t)nr
								  : IPC_SYSCALL_UNKNOWN);
	ipc_put_u32(&m, (uint32_t)role);
	(void)ipc_send_nowait(violation_sock, &m);
}

void
ipc_report_violations_to(int sock)
{
	violation_sock = sock;
	sandbox_set_violation_report(sock >= 0 ? ipc_report_violation : NULL);
}
