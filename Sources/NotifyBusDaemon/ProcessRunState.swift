import SystemSupport

/// Whether a process runs, as the state letter of `/proc/PID/stat` tells.
///
/// /proc cannot tell a frozen process from a sleeping one (both read `S`): frozen is what
/// `cgroup.events` says (`ControlGroup.frozen(inEventsFile:)`). Only a stop shows here.
package enum ProcessRunState: Sendable, Hashable {
    /// Running, runnable or waiting (`R`, `S`, `D`, `I`, …): it runs when it has something to do.
    case running
    /// Stopped by a signal (`T`) or by a tracer (`t`): it runs again only after `SIGCONT`.
    case stopped
    /// It has exited (`Z`, `X`, or no `/proc/PID` any more).
    case gone

    /// The state of process `pid` now, from `/proc/PID/stat`; `nil` when the file cannot be read
    /// for another reason than the process being gone (permissions) or says something unexpected.
    package static func read(pid: Int32) -> ProcessRunState? {
        switch SmallFile.contents(of: "/proc/\(pid)/stat", limit: 4096) {
        case .success(let bytes): return ProcessRunState(stat: bytes)
        case .failure(let error): return error.isMissing ? .gone : nil
        }
    }

    /// The state of `process` now: `.gone` too when its PID belongs to a process that started at
    /// another time (the PID was reused).
    package static func read(_ process: ProcessIdentity) -> ProcessRunState? {
        switch SmallFile.contents(of: "/proc/\(process.pid)/stat", limit: 4096) {
        case .success(let bytes):
            guard let start = ProcessIdentity.startTime(stat: bytes) else { return nil }
            return start == process.startTime ? ProcessRunState(stat: bytes) : .gone
        case .failure(let error):
            return error.isMissing ? .gone : nil
        }
    }

    /// The state that `stat` (the contents of a `/proc/PID/stat`) gives: the letter after the
    /// last `)`, which closes the command name (a name may hold `)` and spaces itself); `nil`
    /// when there is no such letter.
    package init?(stat: some Collection<UInt8>) {
        let bytes = Array(stat)
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        guard let letter = bytes[(close + 1)...].first(where: { $0 != UInt8(ascii: " ") }) else { return nil }
        switch letter {
        case UInt8(ascii: "T"), UInt8(ascii: "t"): self = .stopped
        case UInt8(ascii: "Z"), UInt8(ascii: "X"), UInt8(ascii: "x"): self = .gone
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): self = .running
        default: return nil
        }
    }
}
