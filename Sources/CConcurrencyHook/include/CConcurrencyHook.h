#ifndef NOTIFYBUS_CCONCURRENCYHOOK_H
#define NOTIFYBUS_CCONCURRENCYHOOK_H

#include <stdbool.h>

/// Makes `enqueue` the global executor of Swift concurrency: every job the runtime would put on its
/// global (libdispatch) pool goes to `enqueue` instead, as the runtime's pointer to a job.
///
/// It sets the runtime's `swift_task_enqueueGlobal_hook` by its address, which the link resolves,
/// so it works where the runtime is linked statically and does not export the hook. Returns false,
/// changing nothing, when the hook is set already. Call it once, before any task runs elsewhere.
bool notifybus_install_global_enqueue(void (*_Nonnull enqueue)(void *_Nonnull job));

#endif
