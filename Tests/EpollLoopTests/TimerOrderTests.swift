@testable import EpollLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A small deterministic generator, so that a failing order can be reproduced from its seed.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("TimerQueue")
struct TimerQueueTests {
    /// Drains every timer due by `now`, returning their handler values.
    private func drain(_ queue: inout TimerQueue<Int>, at now: UInt64 = .max / 2) -> [Int] {
        var fired: [Int] = []
        while let (_, value) = queue.popDue(at: now) { fired.append(value) }
        return fired
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomDeadlinesComeOutInOrderWithTiesFirstInFirstOut(seed: UInt64) {
        var random = SplitMix(state: seed)
        var queue = TimerQueue<Int>()
        // Few distinct deadlines among many timers: lots of ties.
        let deadlines = (0..<2_000).map { _ in UInt64.random(in: 1...300, using: &random) }
        for (index, deadline) in deadlines.enumerated() {
            queue.schedule(id: UInt64(index + 1), deadline: deadline, interval: nil, handler: index)
        }
        let expected = deadlines.indices.sorted { (deadlines[$0], $0) < (deadlines[$1], $1) }
        let earliest = queue.earliestDeadline()
        #expect(earliest == deadlines.min())
        #expect(drain(&queue) == expected)
        let none = queue.earliestDeadline()
        #expect(queue.isEmpty && none == nil)
    }

    @Test func onlyDueTimersArePoppedAndEqualDeadlinesKeepSchedulingOrder() {
        var queue = TimerQueue<Int>()
        for index in 0..<50 { queue.schedule(id: UInt64(100 + index), deadline: 10, interval: nil, handler: index) }
        queue.schedule(id: 200, deadline: 11, interval: nil, handler: 99)
        #expect(drain(&queue, at: 9) == [])
        #expect(drain(&queue, at: 10) == Array(0..<50))
        let next = queue.earliestDeadline()
        #expect(next == 11)
        #expect(drain(&queue, at: 11) == [99])
    }

    @Test(arguments: [7, 8, 9] as [UInt64])
    func cancelledTimersNeverComeOut(seed: UInt64) {
        var random = SplitMix(state: seed)
        var queue = TimerQueue<Int>()
        let deadlines = (0..<1_000).map { _ in UInt64.random(in: 1...1_000, using: &random) }
        for (index, deadline) in deadlines.enumerated() {
            queue.schedule(id: UInt64(index + 1), deadline: deadline, interval: nil, handler: index)
        }
        var cancelled = Set<Int>()
        for index in deadlines.indices where Bool.random(using: &random) || index % 7 == 0 {
            let wasScheduled = queue.cancel(UInt64(index + 1))
            #expect(wasScheduled)
            cancelled.insert(index)
        }
        let again = queue.cancel(UInt64(cancelled.first! + 1))  // twice: not scheduled any more
        let unknown = queue.cancel(5_000)
        #expect(!again && !unknown)
        let live = deadlines.indices.filter { !cancelled.contains($0) }
        let earliest = queue.earliestDeadline()
        #expect(earliest == live.map { deadlines[$0] }.min())
        #expect(drain(&queue) == live.sorted { (deadlines[$0], $0) < (deadlines[$1], $1) })
    }

    @Test func cancellingMostTimersKeepsTheRestInOrder() {
        // Enough cancellations to make the stale entries outnumber the live ones.
        var queue = TimerQueue<Int>()
        for index in 0..<1_000 {
            queue.schedule(id: UInt64(index + 1), deadline: UInt64(1_000 - index % 10), interval: nil, handler: index)
        }
        for index in 0..<1_000 where index % 50 != 0 { queue.cancel(UInt64(index + 1)) }
        let live = (0..<1_000).filter { $0 % 50 == 0 }
        #expect(drain(&queue) == live.sorted { (1_000 - $0 % 10, $0) < (1_000 - $1 % 10, $1) })
    }

    @Test func repeatingTimerComesBackOnePeriodLaterOrAfterNowWhenBehind() {
        var queue = TimerQueue<Int>()
        queue.schedule(id: 1, deadline: 100, interval: 10, handler: 1)
        queue.schedule(id: 2, deadline: 115, interval: nil, handler: 2)
        #expect(drain(&queue, at: 100) == [1])
        #expect(queue.timers[1]?.deadline == 110)
        #expect(drain(&queue, at: 115) == [1, 2])  // 110, then the one-shot at 115
        #expect(queue.timers[1]?.deadline == 120)
        #expect(drain(&queue, at: 1_000) == [1])  // fell behind: once, not once per missed period
        #expect(queue.timers[1]?.deadline == 1_010)
        let cancelled = queue.cancel(1)
        #expect(cancelled)
        #expect(queue.isEmpty && drain(&queue) == [])
    }
}

@Suite("EventLoopThread timers")
struct LoopTimerOrderTests {
    @Test(arguments: [11, 12] as [UInt64])
    func manyTimersFireInDeadlineOrderAndCancelledOnesNever(seed: UInt64) async throws {
        let loop = try EventLoopThread(name: "test-timer-heap")
        let fired = Recorder<Int>()
        let expected = try await loop.submit { context -> [Int] in
            var random = SplitMix(state: seed)
            let base = context.now() + 30_000_000
            // Deadlines on a 1 ms grid within 40 ms: many timers share one.
            let deadlines = (0..<400).map { _ in base + UInt64.random(in: 0..<40, using: &random) * 1_000_000 }
            var timers: [LoopTimer] = []
            for (index, deadline) in deadlines.enumerated() {
                timers.append(context.scheduleTimer(deadline: deadline, repeating: nil) { fired.append(index) })
            }
            var cancelled = Set<Int>()
            for index in deadlines.indices where index % 3 == 0 {
                context.cancelTimer(timers[index])
                cancelled.insert(index)
            }
            // A handler due with the first timers cancels the last one, which never fires then.
            let order = { (a: Int, b: Int) in (deadlines[a], a) < (deadlines[b], b) }
            let live = deadlines.indices.filter { !cancelled.contains($0) }
            let first = live.min(by: order)!, last = live.max(by: order)!
            let victim = timers[last]
            context.scheduleTimer(deadline: deadlines[first], repeating: nil) { context.cancelTimer(victim) }
            cancelled.insert(last)
            return deadlines.indices.filter { !cancelled.contains($0) }.sorted(by: order)
        }
        let got = await fired.wait(for: expected.count, timeout: .seconds(3))
        try await Task.sleep(for: .milliseconds(30))  // long enough for the cancelled ones to show
        #expect(got == expected)
        #expect(fired.all == expected)
        await loop.shutdown()
    }
}

/// How many times `SIGUSR2` reached the handler the signal test installs.
private let signalsHandled = Atomic<Int>(0)

@Suite("EventLoopThread and signals")
struct LoopSignalTests {
    @Test func signalsThatInterruptEpollWaitLeaveTheLoopWorking() async throws {
        // A handler without SA_RESTART: epoll_wait fails with EINTR when the signal lands.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in signalsHandled.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        #expect(sigaction(SIGUSR2, &action, nil) == 0)

        let loop = try EventLoopThread(name: "test-signal")
        let fired = Recorder<String>()
        let thread = try await loop.submit { context -> pthread_t in
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            context.scheduleTimer(after: .milliseconds(300)) { fired.append("timer") }
            return pthread_self()
        }
        let before = signalsHandled.load(ordering: .relaxed)
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(10))  // asleep in epoll_wait again
            #expect(pthread_kill(thread, SIGUSR2) == 0)
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while signalsHandled.load(ordering: .relaxed) < before + 10 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(signalsHandled.load(ordering: .relaxed) >= before + 10)
        #expect(loop.isRunning)
        #expect(try await loop.submit { _ in 7 } == 7)
        #expect(await fired.wait(for: 1) == ["timer"])

        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let (r, w) = (fds[0], fds[1])
        _ = try await loop.submit { context in
            try? context.register(fileDescriptor: r, interest: .readable) { _ in
                var byte: UInt8 = 0
                _ = read(r, &byte, 1)
                fired.append("readable")
            }
        }
        #expect(pthread_kill(thread, SIGUSR2) == 0)
        var byte: UInt8 = 1
        _ = write(w, &byte, 1)
        #expect(await fired.wait(for: 2) == ["timer", "readable"])
        await loop.shutdown()
    }
}
