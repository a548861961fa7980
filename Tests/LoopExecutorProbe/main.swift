// A test helper: installs LoopExecutor as Swift concurrency's global executor in a process of its
// own (the runtime's hook is the process's, and a test runner may have set it already), puts it
// through tasks, task groups and sleeps, and reports one line per check on standard output:
//
//   install FIRST SECOND          what the first and a second LoopExecutor.install() returned
//   executor NAME,NAME            the executor's thread names
//   tasks SUM GROUPSUM            the sums that 1000 detached tasks and a group of 1000 children returned
//   task-threads NAME,NAME        the threads those tasks, and the code after each sleep, ran on
//   yield-moves N                 how often a task came back from Task.yield() on another thread (of 100)
//   sleep-for MS                  how long Task.sleep(for: .milliseconds(50)) took
//   sleep-nanoseconds MS          how long Task.sleep(nanoseconds: 50_000_000) took
//   sleep-suspending MS           how long Task.sleep(until: now + 50 ms, clock: .suspending) took
//   sleep-cancelled MS            how long a 60 s sleep took to throw when cancelled after 20 ms
//   ready                         all done; the process then does nothing until a line (or end) on stdin
//
// The main thread stays out of Swift concurrency (no async main, whose main queue is libdispatch's):
// it blocks in read(2) on standard input while the checks run, and while the test watches the
// idle process.

import LoopExecutor

#if canImport(Glibc)
import Glibc
#endif

/// Writes `line` to standard output at once (stdout is a socket here, which stdio would buffer).
func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// The kernel's name of the calling thread (`/proc/thread-self/comm`).
func threadName() -> String {
    let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "?" }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = read(fd, &buffer, buffer.count)
    guard count > 0 else { return "?" }
    return String(decoding: buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
}

func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
}

func runChecks() async {
    var threads = Set<String>()

    var sum = 0
    let tasks = (1...1000).map { index in Task.detached { (index, threadName()) } }
    for task in tasks {
        let (value, thread) = await task.value
        sum += value
        threads.insert(thread)
    }
    let groupSum = await withTaskGroup(of: (Int, String).self) { group in
        for index in 1...1000 { group.addTask { (index, threadName()) } }
        var sum = 0
        for await (value, thread) in group {
            sum += value
            threads.insert(thread)
        }
        return sum
    }
    report("tasks \(sum) \(groupSum)")

    var moves = 0
    for _ in 0..<100 {
        let before = threadName()
        await Task.yield()
        if threadName() != before { moves += 1 }
    }
    threads.insert(threadName())

    var start = ContinuousClock.now
    try? await Task.sleep(for: .milliseconds(50))
    report("sleep-for \(milliseconds(since: start))")
    threads.insert(threadName())

    start = ContinuousClock.now
    try? await Task.sleep(nanoseconds: 50_000_000)
    report("sleep-nanoseconds \(milliseconds(since: start))")
    threads.insert(threadName())

    start = ContinuousClock.now
    try? await Task.sleep(until: SuspendingClock.now + .milliseconds(50), clock: .suspending)
    report("sleep-suspending \(milliseconds(since: start))")
    threads.insert(threadName())

    start = ContinuousClock.now
    let sleeper = Task.detached { try? await Task.sleep(for: .seconds(60)) }
    try? await Task.sleep(for: .milliseconds(20))
    sleeper.cancel()
    await sleeper.value
    report("sleep-cancelled \(milliseconds(since: start))")

    report("yield-moves \(moves)")
    report("task-threads \(threads.sorted().joined(separator: ","))")
}

let first = LoopExecutor.install()
let second = LoopExecutor.install()
report("install \(first) \(second)")
report("executor \(LoopExecutor.threadNames.joined(separator: ","))")
Task.detached {
    await runChecks()
    report("ready")
}
var byte: UInt8 = 0
while read(0, &byte, 1) == 1 && byte != UInt8(ascii: "\n") {}
exit(0)
