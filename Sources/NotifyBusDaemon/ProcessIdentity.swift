import SystemSupport

/// A process as the daemon knows it: its PID together with its start time (field 22 of
/// `/proc/PID/stat`, in clock ticks since boot), so that a new process that reuses the PID is a
/// different process and inherits nothing the daemon knew of the old one.
package struct ProcessIdentity: Sendable, Hashable, CustomStringConvertible {
    /// Its process ID.
    package var pid: Int32
    /// When it started, in clock ticks since boot.
    package var startTime: UInt64

    /// The process `pid` that started at `startTime`.
    package init(pid: Int32, startTime: UInt64) {
        self.pid = pid
        self.startTime = startTime
    }

    /// `PID@START`.
    package var description: String { "\(pid)@\(startTime)" }

    /// The process that has the ID `pid` now; `nil` when there is none (or `/proc` hides it).
    package static func current(pid: Int32) -> ProcessIdentity? {
        guard pid > 0, case .success(let bytes) = SmallFile.contents(of: "/proc/\(pid)/stat", limit: 4096),
              let startTime = startTime(stat: bytes)
        else { return nil }
        return ProcessIdentity(pid: pid, startTime: startTime)
    }

    /// The start time in `stat` (the contents of a `/proc/PID/stat`): the 20th field after the `)`
    /// that closes the command name (the name may hold `)` and spaces itself); `nil` when there is
    /// no such number.
    package static func startTime(stat: some Collection<UInt8>) -> UInt64? {
        let bytes = Array(stat)
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        // Fields 3 (state) to 52: field 22 is the 20th.
        guard fields.count >= 20 else { return nil }
        var value: UInt64 = 0
        for byte in fields[fields.startIndex + 19] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = times &+ UInt64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
