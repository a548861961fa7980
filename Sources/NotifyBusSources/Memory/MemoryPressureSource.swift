#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Memory pressure from Linux PSI (pressure stall information), published as the specification's (Source keys and values)
/// `memory/pressure`: `"normal"`, `"warning"` or `"critical"` (iOS's memory warning, GLib's
/// `GMemoryMonitor` levels).
///
/// What it does:
/// - Arms two PSI poll triggers on the pressure file (`Configuration.path`: `/proc/pressure/memory`
///   for the whole system, or a cgroup's `memory.pressure`): `some 100000 2000000` (some tasks
///   stalled on memory for 100 ms within a 2 s window) and `full 100000 2000000` (all of them).
///   Each has a descriptor of its own, watched for `EPOLLPRI` on the source's loop: it never polls.
/// - Publishes `"normal"` once both are armed; a `some` trigger raises the level to `"warning"`,
///   a `full` one to `"critical"`. The level is the highest triggered since the last `"normal"`,
///   and falls only to `"normal"`, 10 s after the last trigger event: its one timer, armed only
///   while the level is not `"normal"`.
/// - Before writing a trigger it checks that the file is a kernel file (procfs or a cgroup file
///   system) that reads as PSI (`some avg10=…`), so that a wrong path never has a trigger written
///   into an ordinary file.
/// - `reread()` arms the triggers again when they could not be armed (the group exists now, say);
///   while armed there is nothing to read: PSI tells every change.
///
/// Status: `running` once both triggers are armed and `"normal"` published; `unavailable` with the
/// kernel's reason where the file is missing (`ENOENT`), not a PSI file, or the trigger is refused
/// (`EPERM`, `EINVAL`, `EOPNOTSUPP` where PSI is off), and when the file goes away under it (a
/// cgroup removed): the key keeps its value, and falls to `"normal"` 10 s after the last trigger
/// as always. It then waits for a `reread()`; there is nothing to watch for the file's return.
public typealias MemoryPressureSource = SystemSource<MemoryPressureConfiguration>

/// How `MemoryPressureSource` behaves: which pressure file it watches.
public struct MemoryPressureConfiguration: Sendable {
    /// The environment variable that names the pressure file in place of `/proc/pressure/memory`.
    public static let environmentVariable = "NOTIFYBUS_MEMORY_PRESSURE"
    /// The system's memory pressure file.
    public static let systemPath = "/proc/pressure/memory"

    /// The PSI file whose triggers are armed, e.g. `/proc/pressure/memory` or
    /// `/sys/fs/cgroup/user.slice/memory.pressure`.
    public var path: String

    /// Creates a configuration for the pressure file at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The file named by `NOTIFYBUS_MEMORY_PRESSURE` when it is set and not empty, else
    /// `/proc/pressure/memory`.
    public init() {
        let named = getenv(Self.environmentVariable).map { String(cString: $0) } ?? ""
        self.init(path: named.isEmpty ? Self.systemPath : named)
    }
}
