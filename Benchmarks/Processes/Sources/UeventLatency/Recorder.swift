import Harness
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The timestamps of one measured uevent.
struct Sample: Sendable {
    /// Just before `umockdev_testbed_uevent`.
    var sent: UInt64 = 0
    /// The bare monitor's `udev_monitor_receive_device` returned the device.
    var bare: UInt64 = 0
    /// The bare monitor has also read the device into a `PowerSupplyReading` (the source's parsing).
    var bareParsed: UInt64 = 0
    /// The bus subscriber's callback ran with the new `battery/<name>/state`.
    var bus: UInt64 = 0
    /// The extra bare monitor of the control run, if any.
    var control: UInt64 = 0
    /// Which half of the run (the two differ in the order umockdev serves the sockets).
    var phase = 0
    /// A warm-up uevent, left out of the figures.
    var warmup = false
    /// The battery state this uevent announces (`"charging"` or `"unplugged"`).
    var expected = ""
    /// A receiver saw something other than `expected`.
    var mismatch = false

    var isComplete: Bool { bare != 0 && bareParsed != 0 && bus != 0 }
}

/// Which receiver is reporting.
enum Receiver: Sendable {
    case bare, bareParsed, bus, control
}

/// Where the receivers, each on its own thread, record when the uevent in flight reached them.
///
/// One uevent is in flight at a time: the driver opens a sample (`begin`), sends the uevent, and
/// waits until every receiver recorded it (`isComplete`) before the next one. Receivers take their
/// timestamp before taking the lock.
final class Recorder: Sendable {
    private struct State {
        var samples: [Sample] = []
        /// The sample of the uevent in flight; `nil` between uevents (a receiver then ignores what it sees).
        var current: Int?
        var expectsControl = false
    }

    private let state = Mutex(State())

    init(capacity: Int, control: Bool) {
        state.withLock {
            $0.samples.reserveCapacity(capacity)
            $0.expectsControl = control
        }
    }

    /// Opens the sample of the next uevent, announcing `expected`, sent at `sent`.
    func begin(expected: String, phase: Int, warmup: Bool, sent: UInt64) {
        state.withLock { state in
            state.samples.append(Sample(sent: sent, phase: phase, warmup: warmup, expected: expected))
            state.current = state.samples.count - 1
        }
    }

    /// Records that `receiver` got the uevent in flight at `time`, carrying `state` (when known).
    func record(_ receiver: Receiver, at time: UInt64, state value: String?) {
        state.withLock { state in
            guard let index = state.current else { return }
            if let value, value != state.samples[index].expected { state.samples[index].mismatch = true }
            switch receiver {
            case .bare: if state.samples[index].bare == 0 { state.samples[index].bare = time }
            case .bareParsed: if state.samples[index].bareParsed == 0 { state.samples[index].bareParsed = time }
            case .bus: if state.samples[index].bus == 0 { state.samples[index].bus = time }
            case .control: if state.samples[index].control == 0 { state.samples[index].control = time }
            }
        }
    }

    /// Whether every receiver has recorded the uevent in flight.
    var isComplete: Bool {
        state.withLock { state in
            guard let index = state.current else { return true }
            let sample = state.samples[index]
            return sample.isComplete && (!state.expectsControl || sample.control != 0)
        }
    }

    /// Closes the uevent in flight.
    func end() { state.withLock { $0.current = nil } }

    /// Every sample so far.
    var samples: [Sample] { state.withLock { $0.samples } }
}
