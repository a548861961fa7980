// An idle comparison for scripts/measure-idle-daemon: the minimal program of Baseline.swift, but
// its child tasks run on a task executor of its own (SE-0417, `withTaskExecutorPreference`: one
// thread waiting on a semaphore) instead of Swift concurrency's global executor, and so does its
// main task, the idle wait included. libdispatch's root queues are never used, so its worker-pool
// monitor (a 1 s timer, armed on their first use and never cancelled) never starts. A
// `Task.sleep` anywhere would still go through the global executor and arm it.
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs jobs on one thread of its own, in the order they come.
final class ThreadExecutor: TaskExecutor {
    private let jobs = Mutex<[UnownedJob]>([])
    private let wake = DispatchSemaphore(value: 0)

    func enqueue(_ job: UnownedJob) {
        jobs.withLock { $0.append(job) }
        wake.signal()
    }

    /// Starts its thread.
    func start() {
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            Unmanaged<ThreadExecutor>.fromOpaque(context!).takeUnretainedValue().run()
        }, Unmanaged.passRetained(self).toOpaque())
    }

    private func run() -> Never {
        while true {
            wake.wait()
            let batch = jobs.withLock { jobs in
                defer { jobs = [] }
                return jobs
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

@main
struct OwnExecutor {
    static func main() async {
        let executor = ThreadExecutor()
        executor.start()
        // Everything, the idle wait included, under the preference: a resumption of the main task
        // on the main executor after its preference ended would use the root queues again.
        await withTaskExecutorPreference(executor) {
            let total = await withTaskGroup(of: Int.self) { group in
                for i in 0..<4 { group.addTask { (0..<1000).reduce(i, &+) } }
                return await group.reduce(0, +)
            }
            let stream = AsyncStream<Int> { _ in }
            for await _ in stream {}
            print(total)
        }
    }
}
