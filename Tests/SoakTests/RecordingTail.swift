import NotifyBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `--record` file of a running `notifywatch`, read as it grows: what the bus has seen since
/// the subscriber was suspended, key by key.
///
/// notifywatch writes the recording line by line as the bus sees things, so an `event` record
/// there means the bus has the event, though the suspended subscriber prints nothing. Only the
/// bytes added since the last `poll()` are read and parsed.
final class RecordingTail: Sendable {
    /// The events recorded after the first `suspend` record.
    struct Events: Sendable {
        /// The latest value of each key.
        var latest: [String: JSONValue] = [:]
        /// How many events each key had.
        var counts: [String: Int] = [:]
        /// The position of each key's latest event among all the events counted (from 0).
        var lastPosition: [String: Int] = [:]
        /// How many events were counted, all keys together.
        var total = 0
        /// Whether the `suspend` record was seen (events are counted only after it).
        var suspended = false

        /// The number of events for keys with `prefix`.
        func count(prefix: String) -> Int {
            counts.reduce(0) { $0 + ($1.key.hasPrefix(prefix) ? $1.value : 0) }
        }

        /// The keys in the order of their latest events: the order of a flush.
        var keysByLatestEvent: [String] {
            lastPosition.sorted { $0.value < $1.value }.map(\.key)
        }
    }

    private struct State {
        var offset: off_t = 0
        var partial: [UInt8] = []
        var events = Events()
        var unparsable: [String] = []
    }

    /// The file read.
    let path: String
    private let state = Mutex(State())

    init(path: String) {
        self.path = path
    }

    /// Reads what was added to the file, and returns the events so far.
    @discardableResult
    func poll() -> Events {
        state.withLock { state in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                defer { close(fd) }
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = pread(fd, &chunk, chunk.count, state.offset)
                    if n <= 0 { break }
                    state.offset += off_t(n)
                    Self.accept(chunk[0..<n], into: &state)
                }
            }
            return state.events
        }
    }

    /// Lines that were not JSON (there should be none).
    var unparsable: [String] { state.withLock { $0.unparsable } }

    private static func accept(_ bytes: ArraySlice<UInt8>, into state: inout State) {
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line: [UInt8]
            if state.partial.isEmpty {
                line = Array(bytes[start..<newline])
            } else {
                line = state.partial + bytes[start..<newline]
                state.partial = []
            }
            record(line, into: &state)
            start = newline + 1
        }
        state.partial += bytes[start...]
    }

    private static func record(_ line: [UInt8], into state: inout State) {
        guard !line.isEmpty else { return }
        guard let record = try? JSONValue(parsing: line) else {
            state.unparsable.append(String(decoding: line, as: UTF8.self))
            return
        }
        switch record["type"]?.stringValue {
        case "suspend"?:
            state.events.suspended = true
        case "event"? where state.events.suspended:
            guard let key = record["key"]?.stringValue, let value = record["value"] else {
                state.unparsable.append(String(decoding: line, as: UTF8.self))
                return
            }
            state.events.latest[key] = value
            state.events.counts[key, default: 0] += 1
            state.events.lastPosition[key] = state.events.total
            state.events.total += 1
        default:
            break
        }
    }
}
