public import NotifyBusSources
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A wall clock that moves only when told: for tests of `TimeSource` that cross midnight or a
/// daylight-saving transition, or step the clock, without touching the machine's clock.
///
/// `advance(to:)` moves time on as it passes (an alarm whose deadline is reached fires);
/// `set(to:)` steps the clock as `clock_settime` would (every armed alarm reports `clockSet`,
/// as a `timerfd` with `TFD_TIMER_CANCEL_ON_SET` does). Each alarm is a pipe whose read end
/// becomes readable when it has something to report. Thread-safe.
///
/// ```swift
/// let clock = ManualWallClock(now: 1_711_846_799)   // 2024-03-31T00:59:59Z
/// let source = TimeSource(bus: bus, configuration: .init(clock: clock))
/// clock.advance(to: 1_711_846_800)                  // Berlin's clocks go forward
/// ```
public final class ManualWallClock: WallClock {
    private struct AlarmState {
        var writeFD: Int32
        var deadline: Int64?
        var clockSet = false
    }

    private struct State {
        var now: Int64
        var nextID: UInt64 = 1
        var alarms: [UInt64: AlarmState] = [:]
    }

    private let state: Mutex<State>

    /// A clock showing `now` (seconds since the epoch, UTC).
    public init(now: Int64) {
        state = Mutex(State(now: now))
    }

    /// The time it shows.
    public func now() -> Int64 { state.withLock { $0.now } }

    /// The deadlines of its armed alarms, earliest first (what the source waits for).
    public var armedDeadlines: [Int64] {
        state.withLock { $0.alarms.values.compactMap(\.deadline).sorted() }
    }

    /// Moves the clock on to `time` (no earlier than now): alarms whose deadline it reaches fire.
    public func advance(to time: Int64) {
        let wake = state.withLock { state -> [Int32] in
            state.now = max(state.now, time)
            return state.alarms.values.filter { ($0.deadline ?? .max) <= state.now }.map(\.writeFD)
        }
        wake.forEach(Self.poke)
    }

    /// Moves the clock on by `seconds`.
    public func advance(by seconds: Int64) {
        advance(to: now() + max(seconds, 0))
    }

    /// Steps the clock to `time` (forwards or backwards), as setting the system clock does: every
    /// armed alarm reports `clockSet` instead of firing.
    public func set(to time: Int64) {
        let wake = state.withLock { state -> [Int32] in
            state.now = time
            var wake: [Int32] = []
            for (id, alarm) in state.alarms where alarm.deadline != nil {
                state.alarms[id]?.deadline = nil
                state.alarms[id]?.clockSet = true
                wake.append(alarm.writeFD)
            }
            return wake
        }
        wake.forEach(Self.poke)
    }

    /// A pipe-backed alarm.
    public func makeAlarm() throws -> any WallClockAlarm {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ClockError(operation: "pipe", errno: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            state.alarms[state.nextID] = AlarmState(writeFD: fds[1], deadline: nil)
            return state.nextID
        }
        return Alarm(clock: self, id: id, readFD: fds[0])
    }

    /// Why making an alarm failed.
    public struct ClockError: Error, Sendable, Hashable {
        /// The system call.
        public var operation: String
        /// Its `errno`.
        public var errno: Int32
    }

    private static func poke(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    private func arm(_ id: UInt64, at deadline: Int64) {
        let fd = state.withLock { state -> Int32? in
            state.alarms[id]?.deadline = deadline
            state.alarms[id]?.clockSet = false
            return deadline <= state.now ? state.alarms[id]?.writeFD : nil
        }
        fd.map(Self.poke)
    }

    private func take(_ id: UInt64) -> WallClockEvent {
        state.withLock { state in
            guard let alarm = state.alarms[id] else { return .none }
            if alarm.clockSet {
                state.alarms[id]?.clockSet = false
                return .clockSet
            }
            if let deadline = alarm.deadline, deadline <= state.now {
                state.alarms[id]?.deadline = nil
                return .fired
            }
            return .none
        }
    }

    private func remove(_ id: UInt64) {
        let fd = state.withLock { $0.alarms.removeValue(forKey: id)?.writeFD }
        if let fd { closeDescriptor(fd) }
    }

    private final class Alarm: WallClockAlarm {
        let clock: ManualWallClock
        let id: UInt64
        private(set) var fileDescriptor: Int32

        init(clock: ManualWallClock, id: UInt64, readFD: Int32) {
            self.clock = clock
            self.id = id
            fileDescriptor = readFD
        }

        deinit { close() }

        func arm(at deadline: Int64) throws { clock.arm(id, at: deadline) }

        func read() throws -> WallClockEvent {
            var buffer = [UInt8](repeating: 0, count: 64)
            while fileDescriptor >= 0, readDescriptor(fileDescriptor, &buffer) > 0 {}
            return clock.take(id)
        }

        func close() {
            guard fileDescriptor >= 0 else { return }
            closeDescriptor(fileDescriptor)
            fileDescriptor = -1
            clock.remove(id)
        }
    }
}

/// `read(2)` into `buffer`, out of reach of the alarm's own `read()`.
private func readDescriptor(_ fd: Int32, _ buffer: inout [UInt8]) -> Int {
    buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
}

/// `close(2)`, out of reach of the alarm's own `close()`.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
