import CConcurrencyHook
import NIOCore
import NIOPosix

/// SwiftNIO's event loops as Swift concurrency's global executor.
///
/// On Linux the default global executor is libdispatch's root queues, whose worker-pool monitor
/// arms a one-second timer on first use and never cancels it: a program idle on them wakes every
/// second. On SwiftNIO's singleton `MultiThreadedEventLoopGroup` an idle program wakes for nothing.
///
/// SwiftNIO's own `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
/// finds the runtime's hook with `dlsym`, which fails where the runtime is linked statically
/// (`--static-swift-stdlib` links it with `--exclude-libs ALL`, so the hook is not exported);
/// this sets the same hook by its address, which the link resolves either way.
public enum NIOGlobalExecutor {
    /// Installs the singleton event loops as the global executor: each job goes to the loop of
    /// the thread that enqueues it when that is one of them, else to the next loop.
    ///
    /// Call it first thing in `main`, before any task is created. Returns false, changing
    /// nothing, when another global executor is installed already.
    @discardableResult
    public static func install() -> Bool {
        notifybus_install_global_enqueue { job in
            let job = ExecutorJob(unsafeBitCast(job, to: UnownedJob.self))
            MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(job)
        }
    }
}
