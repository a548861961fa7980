import EpollLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A thread-safe list of what handlers saw, plus a way to wait until it holds enough.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }

    /// Waits (up to `timeout`) until at least `count` items were recorded; returns them.
    func wait(for count: Int, timeout: Duration = .seconds(5)) async -> [Element] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = all
            if current.count >= count { return current }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return all
    }
}

private func makePipe() -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    _ = pipe(&fds)
    _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
    return (fds[0], fds[1])
}

private func writeByte(_ fd: Int32) {
    var byte: UInt8 = 1
    _ = write(fd, &byte, 1)
}

private func readAll(_ fd: Int32) -> Int {
    var buffer = [UInt8](repeating: 0, count: 64)
    var total = 0
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { return total }
        total += n
    }
}

/// The loop thread's kernel id ("pid/task/tid" from /proc/thread-self).
private func currentThreadTaskPath() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let n = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard n > 0 else { return "" }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func contextSwitches(ofTask path: String) -> Int? {
    guard let file = fopen("/proc/\(path)/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    var total = 0
    var found = false
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("voluntary_ctxt_switches:") || text.hasPrefix("nonvoluntary_ctxt_switches:") {
            let digits = text.split(separator: ":").last.map { $0.trimmingCharacters() } ?? ""
            total += Int(digits) ?? 0
            found = true
        }
    }
    return found ? total : nil
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.prefix { $0 != "\n" && $0 != " " })
    }
}

/// A job that queues itself again on its loop until stopped (or `limit` steps).
private final class JobChain: Sendable {
    private let loop: EventLoopThread
    private let limit: Int
    private let state = Mutex((steps: 0, stopped: false))

    init(loop: EventLoopThread, limit: Int) {
        self.loop = loop
        self.limit = limit
    }

    func step() {
        let again = state.withLock { state in
            state.steps += 1
            return !state.stopped && state.steps < limit
        }
        if again { try? loop.execute { _ in self.step() } }
    }

    func stop() { state.withLock { $0.stopped = true } }

    /// Whether `count` steps ran within 5 s.
    func waitForSteps(atLeast count: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.steps }) >= count { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    /// The steps run when it was stopped, or `nil` if it was not within 5 s.
    func waitUntilStopped() async -> Int? {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let steps = state.withLock({ $0.stopped ? $0.steps : nil }) { return steps }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return nil
    }
}

@Suite("EventLoopThread")
struct EventLoopThreadTests {
    @Test func jobsRunInOrderOnTheLoopThread() async throws {
        let loop = try EventLoopThread(name: "test-order")
        let seen = Recorder<Int>()
        let onLoop = Recorder<Bool>()
        for i in 0..<200 {
            try loop.execute { _ in
                seen.append(i)
                onLoop.append(loop.isLoopThread)
            }
        }
        let result = try await loop.submit { _ in 42 }
        #expect(result == 42)
        #expect(seen.all == Array(0..<200))
        #expect(onLoop.all.allSatisfy { $0 })
        #expect(!loop.isLoopThread)
        await loop.shutdown()
    }

    @Test func readableRegistrationCallsItsHandler() async throws {
        let loop = try EventLoopThread(name: "test-read")
        let (r, w) = makePipe()
        defer { close(r); close(w) }
        let events = Recorder<IOEvents>()
        _ = try await loop.submit { context in
            try? context.register(fileDescriptor: r, interest: .readable) { ready in
                events.append(ready)
                _ = readAll(r)
            }
        }
        writeByte(w)
        let got = await events.wait(for: 1)
        #expect(got.first == .readable)
        writeByte(w)
        #expect(await events.wait(for: 2).count == 2)
        await loop.shutdown()
    }

    @Test func disabledRegistrationWaitsUntilEnabled() async throws {
        let loop = try EventLoopThread(name: "test-enable")
        let (r, w) = makePipe()
        defer { close(r); close(w) }
        let events = Recorder<IOEvents>()
        let registration = try await loop.submit { context in
            try? context.register(fileDescriptor: r, interest: .readable, enabled: false) { ready in
                events.append(ready)
                _ = readAll(r)
            }
        }
        let handle = try #require(registration)
        writeByte(w)
        // Several rounds of the loop pass; the disabled registration stays silent.
        for _ in 0..<5 { _ = try await loop.submit { _ in () } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(events.all.isEmpty)
        _ = try await loop.submit { context in try? context.setEnabled(true, for: handle) }
        #expect(await events.wait(for: 1) == [.readable])
        await loop.shutdown()
    }

    @Test func readAndWriteRegistrationsShareOneDescriptor() async throws {
        let loop = try EventLoopThread(name: "test-share")
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let reads = Recorder<IOEvents>()
        let writes = Recorder<IOEvents>()
        let fd = fds[0]
        _ = try await loop.submit { context in
            _ = try? context.register(fileDescriptor: fd, interest: .readable) { ready in
                reads.append(ready)
                _ = readAll(fd)
            }
            var writer: IORegistration?
            writer = try? context.register(fileDescriptor: fd, interest: .writable) { ready in
                writes.append(ready)
                // Like a libdbus write watch: disable once the queue is flushed.
                if let writer { try? context.setEnabled(false, for: writer) }
            }
        }
        #expect(await writes.wait(for: 1) == [.writable])
        writeByte(fds[1])
        #expect(await reads.wait(for: 1) == [.readable])
        #expect(writes.all.count == 1)
        await loop.shutdown()
    }

    @Test func deregisteredHandlerIsNotCalled() async throws {
        let loop = try EventLoopThread(name: "test-dereg")
        let (r, w) = makePipe()
        defer { close(r); close(w) }
        let events = Recorder<IOEvents>()
        let registration = try await loop.submit { context in
            try? context.register(fileDescriptor: r, interest: .readable) { events.append($0) }
        }
        let handle = try #require(registration)
        _ = try await loop.submit { context in context.deregister(handle) }
        writeByte(w)
        for _ in 0..<5 { _ = try await loop.submit { _ in () } }
        #expect(events.all.isEmpty)
        await loop.shutdown()
    }

    @Test func registeringARegularFileFailsWithATypedError() async throws {
        let loop = try EventLoopThread(name: "test-eperm")
        let fd = open("/proc/self/exe", O_RDONLY)
        defer { close(fd) }
        let error = try await loop.submit { context -> EventLoopError? in
            do throws(EventLoopError) {
                _ = try context.register(fileDescriptor: fd, interest: .readable) { _ in }
                return nil
            } catch {
                return error
            }
        }
        #expect(error == .systemCall(operation: "epoll_ctl", errno: EPERM))
        await loop.shutdown()
    }

    @Test func oneShotTimerFiresOnceAndCancelledTimerNever() async throws {
        let loop = try EventLoopThread(name: "test-timer")
        let fired = Recorder<String>()
        _ = try await loop.submit { context in
            context.scheduleTimer(after: .milliseconds(20)) { fired.append("one-shot") }
            let cancelled = context.scheduleTimer(after: .milliseconds(10)) { fired.append("cancelled") }
            context.cancelTimer(cancelled)
            context.scheduleTimer(after: .milliseconds(80)) { fired.append("later") }
        }
        let got = await fired.wait(for: 2)
        #expect(got == ["one-shot", "later"])
        try await Task.sleep(for: .milliseconds(50))
        #expect(fired.all == ["one-shot", "later"])
        await loop.shutdown()
    }

    @Test func repeatingTimerRepeatsUntilCancelled() async throws {
        let loop = try EventLoopThread(name: "test-repeat")
        let ticks = Recorder<Int>()
        let timer = try await loop.submit { context in
            context.scheduleTimer(after: .milliseconds(5), repeating: .milliseconds(10)) { ticks.append(1) }
        }
        #expect(await ticks.wait(for: 4).count >= 4)
        let stillScheduled = try await loop.submit { context -> Bool in
            context.cancelTimer(timer)
            return context.isScheduled(timer)
        }
        #expect(!stillScheduled)
        let count = ticks.all.count
        try await Task.sleep(for: .milliseconds(60))
        #expect(ticks.all.count == count)
        await loop.shutdown()
    }

    @Test func shutdownRunsAcceptedJobsRefusesLaterOnesAndReleasesLocalsOnTheLoop() async throws {
        final class Owned {
            let released: Recorder<String>
            init(_ released: Recorder<String>) { self.released = released }
            deinit { released.append(currentThreadTaskPath()) }
        }
        let loop = try EventLoopThread(name: "test-stop")
        let released = Recorder<String>()
        let key = LoopLocalKey<Owned>()
        let loopTask = try await loop.submit { context -> String in
            context[local: key] = Owned(released)
            return currentThreadTaskPath()
        }
        let found = try await loop.submit { context in context[local: key] != nil }
        #expect(found)
        let ran = Recorder<Int>()
        try loop.execute { _ in ran.append(1) }
        await loop.shutdown()
        #expect(ran.all == [1])
        #expect(released.all == [loopTask])
        #expect(!loop.isRunning)
        #expect(throws: EventLoopError.shutDown) { try loop.execute { _ in } }
        await #expect(throws: EventLoopError.shutDown) { try await loop.submit { _ in 1 } }
        await loop.shutdown()  // again: returns at once
    }

    @Test func jobsQueuedByJobsRunAndLeaveRoomForDescriptors() async throws {
        // Each step queues the next from the loop thread (no eventfd write: the loop is awake),
        // until the pipe's handler has run: the loop must run the queued steps without being
        // woken, and poll its descriptors between rounds of them.
        let loop = try EventLoopThread(name: "test-chain")
        let (r, w) = makePipe()
        defer { close(r); close(w) }
        let chain = JobChain(loop: loop, limit: 1_000_000)
        _ = try await loop.submit { context in
            try? context.register(fileDescriptor: r, interest: .readable) { _ in
                _ = readAll(r)
                chain.stop()
            }
        }
        try loop.execute { _ in chain.step() }
        #expect(await chain.waitForSteps(atLeast: 1000))
        writeByte(w)
        let steps = await chain.waitUntilStopped()
        #expect(steps != nil, "the pipe's handler never ran")
        #expect((steps ?? .max) < 1_000_000)
        await loop.shutdown()
    }

    @Test func idleLoopDoesNotWakeUp() async throws {
        let loop = try EventLoopThread(name: "test-idle")
        // A far timer and a quiet descriptor must not cost wake-ups either.
        let (r, w) = makePipe()
        defer { close(r); close(w) }
        let task = try await loop.submit { context -> String in
            context.scheduleTimer(after: .seconds(3600)) {}
            _ = try? context.register(fileDescriptor: r, interest: .readable) { _ in }
            return currentThreadTaskPath()
        }
        try await Task.sleep(for: .milliseconds(50))  // let it settle into epoll_wait
        let before = try #require(contextSwitches(ofTask: task))
        try await Task.sleep(for: .milliseconds(500))
        let after = try #require(contextSwitches(ofTask: task))
        #expect(after == before)
        await loop.shutdown()
    }
}
