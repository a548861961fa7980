import EpollLoop
import SystemSupport

/// The wall clock `TimeSource` reads, and its alarms: the system's (`SystemWallClock`), or one
/// a test moves by hand, so a test crosses midnight, a daylight-saving transition and a clock
/// step without touching the machine's clock.
public protocol WallClock: Sendable {
    /// Now, in whole seconds since the Unix epoch (UTC), rounded down.
    func now() -> Int64
    /// A new, disarmed alarm on this clock, used on one thread (the source's loop).
    func makeAlarm() throws -> any WallClockAlarm
}

/// What a `WallClockAlarm` reports when its descriptor is readable.
public enum WallClockEvent: Sendable, Hashable {
    /// The clock reached the armed deadline, and the alarm is disarmed.
    case fired
    /// The clock was set (stepped), and the alarm is disarmed.
    case clockSet
    /// Nothing happened (a spurious wake-up).
    case none
}

/// An alarm on a `WallClock`: a file descriptor that becomes readable when the clock reaches
/// the armed deadline or is set. Used on one thread.
public protocol WallClockAlarm: AnyObject {
    /// The descriptor to watch for `readable`; `-1` once closed.
    var fileDescriptor: Int32 { get }
    /// Arms the alarm for `deadline` (seconds since the epoch, UTC), replacing any earlier one;
    /// a deadline that has passed fires at once. It also reports the clock being set until it fires.
    func arm(at deadline: Int64) throws
    /// What happened since the last read.
    func read() throws -> WallClockEvent
    /// Releases the descriptor.
    func close()
}

/// The system's wall clock: `CLOCK_REALTIME`, with alarms on a `timerfd` armed with
/// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET` (`EpollLoop`'s `WallClockTimer`), which also
/// tells when the clock is set.
public struct SystemWallClock: WallClock {
    /// The system clock.
    public init() {}

    /// Now, from `WallTime.now()` (`CLOCK_REALTIME`).
    public func now() -> Int64 { WallTime.now().seconds }

    /// A `timerfd` alarm.
    public func makeAlarm() throws -> any WallClockAlarm {
        TimerAlarm(timer: try WallClockTimer())
    }

    /// A `WallClockTimer` as a `WallClockAlarm`.
    private final class TimerAlarm: WallClockAlarm {
        let timer: WallClockTimer

        init(timer: WallClockTimer) { self.timer = timer }

        var fileDescriptor: Int32 { timer.fileDescriptor }

        func arm(at deadline: Int64) throws { try timer.arm(at: deadline) }

        func read() throws -> WallClockEvent {
            switch try timer.read() {
            case .fired: .fired
            case .clockSet: .clockSet
            case .none: .none
            }
        }

        func close() { timer.close() }
    }
}
