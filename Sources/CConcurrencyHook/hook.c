#include "CConcurrencyHook.h"

#include <stddef.h>

// The runtime's hooks (swift/Runtime/ConcurrencyHooks.def): functions of the Swift calling
// convention that take the hooked call's arguments and the runtime's own implementation, which
// they may call instead.
typedef __attribute__((swiftcall)) void (*enqueue_original)(void *job);
typedef __attribute__((swiftcall)) void (*enqueue_after_original)(unsigned long long delay, void *job);
typedef __attribute__((swiftcall)) void (*enqueue_at_original)(long long sec, long long nsec, long long tsec,
                                                               long long tnsec, int clock, void *job);

extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobal_hook)(void *job, enqueue_original original);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobalWithDelay_hook)(
    unsigned long long delay, void *job, enqueue_after_original original);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobalWithDeadline_hook)(
    long long sec, long long nsec, long long tsec, long long tnsec, int clock, void *job,
    enqueue_at_original original);

// Written once (by the one call that claims it), before the hooks are published (release), and
// read by them after.
static notifybus_global_executor installed;
static bool claimed;

static __attribute__((swiftcall)) void enqueue(void *job, enqueue_original original) {
    if (!installed.enqueue(job)) original(job);
}

static __attribute__((swiftcall)) void enqueue_after(unsigned long long delay, void *job,
                                                     enqueue_after_original original) {
    if (!installed.enqueue_after(delay, job)) original(delay, job);
}

static __attribute__((swiftcall)) void enqueue_at(long long sec, long long nsec, long long tsec, long long tnsec,
                                                  int clock, void *job, enqueue_at_original original) {
    if (!installed.enqueue_at(sec, nsec, clock, job)) original(sec, nsec, tsec, tnsec, clock, job);
}

bool notifybus_install_global_executor(notifybus_global_executor executor) {
    __typeof__(swift_task_enqueueGlobal_hook) expected = NULL;
    if (__atomic_load_n(&swift_task_enqueueGlobal_hook, __ATOMIC_ACQUIRE) != NULL ||
        __atomic_exchange_n(&claimed, true, __ATOMIC_ACQ_REL)) {
        return false;
    }
    installed = executor;
    // The delay hooks first: a job the global hook takes may sleep at once.
    __atomic_store_n(&swift_task_enqueueGlobalWithDelay_hook, enqueue_after, __ATOMIC_RELEASE);
    __atomic_store_n(&swift_task_enqueueGlobalWithDeadline_hook, enqueue_at, __ATOMIC_RELEASE);
    if (__atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, enqueue, false, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED)) {
        return true;
    }
    // Lost a race with another installer: the delay hooks were ours, so clear them again.
    __atomic_store_n(&swift_task_enqueueGlobalWithDelay_hook, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&swift_task_enqueueGlobalWithDeadline_hook, NULL, __ATOMIC_RELEASE);
    return false;
}

bool notifybus_global_executor_is_set(void) {
    return __atomic_load_n(&swift_task_enqueueGlobal_hook, __ATOMIC_ACQUIRE) != NULL;
}
