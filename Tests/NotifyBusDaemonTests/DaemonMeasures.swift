import DBus
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What the hostile-client tests measure of the daemon process: its memory and descriptors from
/// /proc, and the answer times a second, well-behaved connection sees.
enum DaemonProcess {
    /// A `kB` field of `/proc/PID/status` (`VmRSS`: resident now; `VmHWM`: the peak since the
    /// process started), in bytes; 0 when unreadable.
    static func bytes(_ field: String, of pid: pid_t) -> Int {
        for line in (readFile("/proc/\(pid)/status") ?? "").split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) } ?? 0
            return number * 1024
        }
        return 0
    }

    static func residentBytes(of pid: pid_t) -> Int { bytes("VmRSS", of: pid) }
    static func peakResidentBytes(of pid: pid_t) -> Int { bytes("VmHWM", of: pid) }

    /// How many descriptors the process has open (entries of /proc/PID/fd).
    static func openDescriptors(of pid: pid_t) -> Int {
        guard let directory = opendir("/proc/\(pid)/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
            if name != UInt8(ascii: ".") { count += 1 }
        }
        return count
    }

    /// Its resident size once it has settled: the smallest of a few readings over `span`.
    static func idleResidentBytes(of pid: pid_t, span: Duration = .milliseconds(500)) async -> Int {
        var smallest = Int.max
        for _ in 0..<5 {
            smallest = min(smallest, residentBytes(of: pid))
            try? await Task.sleep(for: span / 5)
        }
        return smallest
    }

    /// Whether the process is stopped by a signal (`T` or `t` in /proc/PID/stat).
    static func isStopped(_ pid: pid_t) -> Bool {
        guard let stat = readFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(close, offsetBy: 2)]
        return state == "T" || state == "t"
    }
}

let mebibyte = 1 << 20

/// Prints a measurement to the test log (`measured: …`), for setting and checking bounds.
func measured(_ text: String) {
    print("measured: \(text)")
}

/// `bytes` in MiB, for messages.
func mib(_ bytes: Int) -> String {
    let tenths = (bytes * 10 + mebibyte / 2) / mebibyte
    return "\(tenths / 10).\(tenths % 10) MiB"
}

/// The `fraction` percentile of `samples` (nearest rank); `.zero` for none.
func percentile(_ samples: [Duration], _ fraction: Double) -> Duration {
    guard !samples.isEmpty else { return .zero }
    let sorted = samples.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

/// A second, well-behaved connection that asks the daemon (or another service that answers `Get`
/// of `Version` on `/org/notifybus/Bus1`, such as the plain service that anchors it) for `Version`
/// again and again on a thread of its own, recording when each call was sent, its answer's time
/// and value, until stopped.
final class VersionProbe: Sendable {
    struct Sample: Sendable {
        /// When the call was sent.
        let sent: ContinuousClock.Instant
        let latency: Duration
        /// The version answered; `nil` for an error or no answer within the call's timeout.
        let version: UInt32?
    }

    private let samples = Mutex<[Sample]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    /// Starts probing `destination` (the daemon by default) on `address`, one call every `interval`.
    init(address: String, destination: String = Names.bus, interval: Duration = .milliseconds(10)) throws {
        let connection = try RawBusConnection(address: address)
        startThread { [self] in
            defer { finished.store(true, ordering: .releasing) }
            while !stopping.load(ordering: .acquiring) {
                let started = ContinuousClock.now
                let version: UInt32?
                do {
                    let reply = try connection.call(
                        destination: destination, path: "/org/notifybus/Bus1", interface: "org.freedesktop.DBus.Properties", member: "Get",
                        arguments: [.string("org.notifybus.Bus1"), .string("Version")], timeout: .seconds(10))
                    if case .uint32(let number)? = try? reply.arguments().first?.unwrapped { version = number } else { version = nil }
                } catch {
                    version = nil
                }
                let latency = ContinuousClock.now - started
                samples.withLock { $0.append(Sample(sent: started, latency: latency, version: version)) }
                _ = connection.takeInbox()
                usleep(UInt32(interval.components.attoseconds / 1_000_000_000_000))
            }
        }
    }

    /// Stops probing (after the call under way) and returns every sample.
    func stop() async -> [Sample] {
        stopping.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
        return samples.withLock { $0 }
    }

    /// The samples so far.
    var count: Int { samples.withLock { $0.count } }
}

/// The bus object's path, interfaces and error names, as strings for raw connections.
enum Names {
    static let busPath = "/org/notifybus/Bus1"
    static let bus = "org.notifybus.Bus1"
    static let subscription = "org.notifybus.Subscription1"
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let limitsExceeded = "org.notifybus.Error.LimitsExceeded"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
}

extension RawBusConnection {
    /// `Subscribe(patterns, options)`: the subscription's path, or the error's name.
    func subscribe(_ patterns: [String], _ options: [(String, DBusValue)] = []) throws -> Result<String, SubscribeRefusal> {
        let reply = try call(path: Names.busPath, interface: Names.bus, member: "Subscribe", arguments: [.strings(patterns), .vardict(options)])
        if let name = reply.errorName { return .failure(SubscribeRefusal(name: name)) }
        guard let path = try reply.arguments().first?.stringValue else { throw HarnessError("Subscribe answered no path") }
        return .success(path)
    }

    /// Reads messages until `count` `Events` signals came (or `timeout`); returns them.
    func events(count: Int, timeout: Duration = .seconds(10)) throws -> [WireMessage] {
        var found: [WireMessage] = []
        let deadline = ContinuousClock.now + timeout
        while found.count < count, let message = try receive(timeout: deadline - ContinuousClock.now) {
            if message.isEvents { found.append(message) }
        }
        return found
    }

    /// The elements of the `Events` signals that arrive until one satisfies `predicate` (included);
    /// `nil` when none did within `timeout`.
    func elements(
        until predicate: ([String: DBusValue]) -> Bool, timeout: Duration = .seconds(10)
    ) throws -> [[String: DBusValue]]? {
        try elements(untilAll: { $0.last.map(predicate) ?? false }, timeout: timeout)
    }

    /// The elements of the `Events` signals that arrive until those so far satisfy `predicate`;
    /// `nil` when they did not within `timeout`.
    func elements(
        untilAll predicate: ([[String: DBusValue]]) -> Bool, timeout: Duration = .seconds(10)
    ) throws -> [[String: DBusValue]]? {
        var found: [[String: DBusValue]] = []
        let deadline = ContinuousClock.now + timeout
        while let message = try receive(timeout: deadline - ContinuousClock.now) {
            guard message.isEvents else { continue }
            for element in try message.elements() {
                found.append(element)
                if predicate(found) { return found }
            }
        }
        return nil
    }
}

struct SubscribeRefusal: Error, Equatable {
    let name: String
}

/// Whether `elements` hold a `resync` element followed by a notification of each of `keys`.
func resyncCompletes(_ keys: Set<String>) -> @Sendable ([[String: DBusValue]]) -> Bool {
    { elements in
        guard let start = elements.lastIndex(where: { $0.type == "resync" }) else { return false }
        return keys.isSubset(of: Set(elements[start...].compactMap(\.key)))
    }
}

extension Dictionary where Key == String, Value == DBusValue {
    var type: String? { self["type"]?.stringValue }
    var seq: UInt64? { if case .uint64(let n)? = self["seq"] { return n } else { return nil } }
    var key: String? { self["key"]?.stringValue }
    var value: String? { self["value"]?.stringValue }
    var coalesced: Int64? { self["coalesced"]?.int64Value }
}
