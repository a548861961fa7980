import EpollLoop
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The wall clock now, in whole seconds.
private func wallNow() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec)
}

@Suite("WallClockTimer")
struct WallClockTimerTests {
    @Test func firesAtAWallClockDeadlineOnTheLoop() async throws {
        let thread = try EventLoopThread(name: "wallclock-test")
        let seen = Recorder<WallClockTimer.Expiration>()
        let armedAt = wallNow()
        try await thread.submit { context in
            guard let timer = try? WallClockTimer() else { return }
            // Nothing yet: a read says so.
            seen.append((try? timer.read()) ?? .clockSet)
            try? timer.arm(at: armedAt + 1)
            let registration = try? context.register(fileDescriptor: timer.fileDescriptor, interest: .readable) { _ in
                seen.append((try? timer.read()) ?? .clockSet)
                // A deadline in the past fires at once (the next round).
                if seen.all.count == 2 { try? timer.arm(at: 1) }
            }
            _ = registration
        }
        let events = await seen.wait(for: 3, timeout: .seconds(10))
        #expect(events == [.none, .fired, .fired])
        #expect(wallNow() >= armedAt + 1)
        await thread.shutdown()
    }

    @Test func aClosedTimerRefusesToArmOrRead() throws {
        let timer = try WallClockTimer()
        #expect(timer.fileDescriptor >= 0)
        timer.disarm()
        timer.close()
        #expect(timer.fileDescriptor == -1)
        #expect(throws: EventLoopError.self) { try timer.arm(at: wallNow() + 10) }
        #expect(throws: EventLoopError.self) { try timer.read() }
    }
}
