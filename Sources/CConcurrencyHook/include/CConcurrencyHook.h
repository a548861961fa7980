#ifndef NOTIFYBUS_CCONCURRENCYHOOK_H
#define NOTIFYBUS_CCONCURRENCYHOOK_H

#include <stdbool.h>
#include <stdint.h>

/// Where Swift concurrency's global jobs go instead of the runtime's own (libdispatch) executor.
/// Each function gets the runtime's pointer to a job and returns whether it took the job; a job
/// it refuses goes to the runtime's own executor, as if no hook were set.
typedef struct notifybus_global_executor {
    /// A job to run as soon as possible (`swift_task_enqueueGlobal`).
    bool (*_Nonnull enqueue)(void *_Nonnull job);
    /// A job to run after `nanoseconds` (`swift_task_enqueueGlobalWithDelay`: `Task.sleep(nanoseconds:)`).
    bool (*_Nonnull enqueue_after)(uint64_t nanoseconds, void *_Nonnull job);
    /// A job to run at a deadline of the runtime's clock `clock` (`swift_task_enqueueGlobalWithDeadline`:
    /// `Task.sleep(for:)` and the clocks' `sleep` before Swift 6.3, which asks the current executor
    /// for a `SchedulingExecutor` first); the tolerance is not passed on.
    bool (*_Nonnull enqueue_at)(int64_t seconds, int64_t nanoseconds, int32_t clock, void *_Nonnull job);
} notifybus_global_executor;

/// Makes `executor` the global executor of Swift concurrency, delays and deadlines included.
///
/// It sets the runtime's `swift_task_enqueueGlobal_hook`, `swift_task_enqueueGlobalWithDelay_hook`
/// and `swift_task_enqueueGlobalWithDeadline_hook` by their addresses, which the link resolves, so it
/// works where the runtime is linked statically and does not export them. Returns false, changing
/// nothing, when the global-enqueue hook is set already. Call it once, before any task runs elsewhere.
bool notifybus_install_global_executor(notifybus_global_executor executor);

/// Whether Swift concurrency's global-enqueue hook is set (by `notifybus_install_global_executor` or anyone else).
bool notifybus_global_executor_is_set(void);

#endif
