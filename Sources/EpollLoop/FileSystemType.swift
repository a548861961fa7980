import CEpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kind of file system a path is on, as the kernel names it (`statfs`'s `f_type`), for code
/// that must know a kernel file (procfs, a cgroup file system) from an ordinary one before
/// writing to it.
package struct FileSystemType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kernel's magic number for it (`PROC_SUPER_MAGIC`, …).
    package let rawValue: Int

    /// The type with this magic number.
    package init(rawValue: Int) { self.rawValue = rawValue }

    /// procfs (`/proc`). `PROC_SUPER_MAGIC`.
    package static let proc = FileSystemType(rawValue: 0x9fa0)
    /// The cgroup v2 file system. `CGROUP2_SUPER_MAGIC`.
    package static let cgroup2 = FileSystemType(rawValue: 0x6367_7270)
    /// A cgroup v1 hierarchy. `CGROUP_SUPER_MAGIC`.
    package static let cgroup = FileSystemType(rawValue: 0x0027_e0eb)

    /// The type of the file system holding `path`. Wraps `statfs`.
    /// - Throws: `EventLoopError.systemCall` with `statfs`'s `errno` (`ENOENT`, `EACCES`, …).
    package init(ofFileAt path: String) throws(EventLoopError) {
        var type = 0
        guard notifybus_file_system_type(path, &type) == 0 else { throw .lastError("statfs") }
        rawValue = type
    }

    /// The name of a known type (`proc`, `cgroup2`, `cgroup`), else the magic number in hex.
    package var description: String {
        switch self {
        case .proc: "proc"
        case .cgroup2: "cgroup2"
        case .cgroup: "cgroup"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
}
