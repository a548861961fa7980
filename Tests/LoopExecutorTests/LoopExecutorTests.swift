import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// LoopExecutor installed as the global executor of a child process (`LoopExecutorProbe`): the
/// runtime's hook belongs to the process, so it is installed where nothing else set it.
@Suite struct LoopExecutorTests {
    @Test func tasksAndSleepsRunOnTheLoopThreads() throws {
        let probe = try Probe()
        let executor = probe.words("executor")
        #expect(probe.words("install") == ["true", "false"])
        #expect(executor.count == min(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        #expect(executor.allSatisfy { $0.hasPrefix("notifybus-exec") })

        // (1 + … + 1000) from the detached tasks and from the group's children.
        #expect(probe.words("tasks") == ["500500", "500500"])
        // Every task, and the code after every sleep, ran on the executor's threads.
        let threads = probe.words("task-threads")
        #expect(!threads.isEmpty)
        #expect(Set(threads).isSubset(of: Set(executor)))
        // A job enqueued on a loop thread stays on it.
        #expect(probe.words("yield-moves") == ["0"])

        for sleep in ["sleep-for", "sleep-nanoseconds", "sleep-suspending"] {
            let milliseconds = try #require(probe.number(sleep), "\(sleep)")
            #expect(milliseconds >= 50, "\(sleep)")
            #expect(milliseconds < 1000, "\(sleep)")
        }
        let cancelled = try #require(probe.number("sleep-cancelled"))
        #expect(cancelled >= 20 && cancelled < 1000)
    }

    @Test func idleProcessHasOnlyItsThreadsAndDoesNotWake() async throws {
        let probe = try Probe()
        let executor = probe.words("executor")
        // The main thread and the executor's: libdispatch's worker pool never started.
        let names = threadNames(of: probe.child.pid)
        #expect(names.count == 1 + executor.count, "\(names)")
        #expect(Set(names.dropFirst()) == Set(executor), "\(names)")
        #expect(!names.contains { $0.contains("dispatch") }, "\(names)")

        try await Task.sleep(for: .milliseconds(200))  // the last task ends, its thread back in epoll_wait
        let before = contextSwitches(of: probe.child.pid)
        try await Task.sleep(for: .seconds(2))
        let after = contextSwitches(of: probe.child.pid)
        #expect(before.count == names.count)
        #expect(after == before, "context switches of each thread over 2 s idle")
    }
}

/// A running `LoopExecutorProbe` whose checks have finished, and what it reported.
private struct Probe {
    let child: ChildProcess
    let lines: [String: [String]]

    init() throws {
        child = try ChildProcess(executable: Paths.executable("LoopExecutorProbe"), arguments: [], environment: [:])
        var lines: [String: [String]] = [:]
        while true {
            guard let line = child.readLine(timeout: .seconds(10)) else {
                throw HarnessError("LoopExecutorProbe stopped reporting after \(lines.keys.sorted())")
            }
            if line == "ready" { break }
            let words = line.split(separator: " ").map(String.init)
            guard let key = words.first else { continue }
            lines[key] = words.dropFirst().flatMap { $0.split(separator: ",").map(String.init) }
        }
        self.lines = lines
    }

    func words(_ key: String) -> [String] { lines[key] ?? [] }
    func number(_ key: String) -> Int? { words(key).first.flatMap { Int($0) } }
}

/// The thread IDs of process `pid`, the main thread (`pid` itself) first.
private func threadIDs(of pid: pid_t) -> [Int32] {
    guard let directory = opendir("/proc/\(pid)/task") else { return [] }
    defer { closedir(directory) }
    var ids: [Int32] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        if let id = Int32(name) { ids.append(id) }
    }
    return ids.sorted { ($0 == pid ? 0 : 1, $0) < ($1 == pid ? 0 : 1, $1) }
}

/// The kernel's names of the threads of `pid`, the main thread's first.
private func threadNames(of pid: pid_t) -> [String] {
    threadIDs(of: pid).map { id in
        (readFile("/proc/\(pid)/task/\(id)/comm") ?? "").split(separator: "\n").first.map(String.init) ?? ""
    }
}

/// Voluntary plus involuntary context switches of each thread of `pid`, by thread ID.
private func contextSwitches(of pid: pid_t) -> [Int32: Int] {
    var switches: [Int32: Int] = [:]
    for id in threadIDs(of: pid) {
        guard let status = readFile("/proc/\(pid)/task/\(id)/status") else { continue }
        switches[id] = status.split(separator: "\n")
            .filter { $0.hasPrefix("voluntary_ctxt_switches:") || $0.hasPrefix("nonvoluntary_ctxt_switches:") }
            .compactMap { $0.split(separator: ":").last.flatMap { Int($0.drop { $0 == " " || $0 == "\t" }) } }
            .reduce(0, +)
    }
    return switches
}
