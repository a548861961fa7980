#include "CConcurrencyHook.h"

#include <stddef.h>

// The runtime's hook (swift/Runtime/ConcurrencyHooks.def: SWIFT_CONCURRENCY_HOOK(void,
// swift_task_enqueueGlobal, SwiftJob *job)): a function of the Swift calling convention that
// takes the job and the runtime's own enqueue, which it may call instead.
typedef __attribute__((swiftcall)) void (*notifybus_enqueue_global_original)(void *job);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobal_hook)(
    void *job, notifybus_enqueue_global_original original);

static void (*notifybus_enqueue)(void *job);

static __attribute__((swiftcall)) void notifybus_enqueue_global(void *job, notifybus_enqueue_global_original original) {
    (void)original;
    notifybus_enqueue(job);
}

bool notifybus_install_global_enqueue(void (*enqueue)(void *job)) {
    __typeof__(swift_task_enqueueGlobal_hook) expected = NULL;
    if (__atomic_load_n(&swift_task_enqueueGlobal_hook, __ATOMIC_ACQUIRE) != NULL) {
        return false;
    }
    notifybus_enqueue = enqueue;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, notifybus_enqueue_global, false,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}
