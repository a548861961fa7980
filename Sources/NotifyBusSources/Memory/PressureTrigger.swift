import EpollLoop
import SystemSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One PSI poll trigger: the pressure file opened for it with `"<some|full> <stall µs> <window µs>"`
/// written, whose descriptor signals `EPOLLPRI` each time the trigger fires (at most once per
/// window). Wraps `statfs`, `open`, `write` and `close`. Lives on one loop thread; `close()` it.
final class PressureTrigger {
    /// The descriptor to watch for `.priority`.
    let fileDescriptor: Int32
    private var isOpen = true

    /// The file systems a PSI file lives on: procfs (`/proc/pressure/*`), cgroup2 and cgroup v1.
    static let kernelFileSystems: Set<FileSystemType> = [.proc, .cgroup2, .cgroup]

    /// Arms `kind` on the pressure file at `path`: `stall` of stalled time within each `window`.
    /// - Throws: `PressureTriggerError` when the file is not a kernel PSI file or the kernel refuses.
    init(path: String, kind: String, stall: Duration, window: Duration) throws(PressureTriggerError) {
        try Self.checkIsPressureFile(path)
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw .system(operation: "open", path: path, errno: errno) }
        let text = "\(kind) \(Self.microseconds(stall)) \(Self.microseconds(window))"
        // The kernel takes the trigger with its terminating NUL, in one write.
        let written = text.withCString { write(fd, $0, strlen($0) + 1) }
        guard written >= 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system(operation: "writing the trigger \"\(text)\" to", path: path, errno: code)
        }
        fileDescriptor = fd
    }

    deinit { close() }

    /// Closes the descriptor (the kernel removes the trigger); deregister it from the loop first.
    func close() {
        guard isOpen else { return }
        isOpen = false
        _ = Glibc.close(fileDescriptor)
    }

    /// Checks, without writing anything, that `path` is a kernel file that reads as PSI.
    private static func checkIsPressureFile(_ path: String) throws(PressureTriggerError) {
        let type: FileSystemType
        do {
            type = try FileSystemType(ofFileAt: path)
        } catch {
            guard case .systemCall(_, let code) = error else { throw .system(operation: "statfs", path: path, errno: EIO) }
            throw .system(operation: "statfs", path: path, errno: code)
        }
        guard kernelFileSystems.contains(type) else {
            throw .notPressureFile(path: path, reason: "it is on \(type), not procfs or a cgroup file system")
        }
        switch SmallFile.contents(of: path, limit: 256) {
        case .failure(let error):
            throw .system(operation: "reading", path: path, errno: error.errno)
        case .success(let bytes):
            guard bytes.starts(with: Array("some avg10=".utf8)) else {
                throw .notPressureFile(path: path, reason: "it does not read as PSI (some avg10=…)")
            }
        }
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

/// Why a PSI trigger could not be armed.
enum PressureTriggerError: Error, Equatable, CustomStringConvertible {
    /// A system call failed: what it did, on which file, and its `errno`.
    case system(operation: String, path: String, errno: Int32)
    /// The file is not one to write a trigger to.
    case notPressureFile(path: String, reason: String)

    /// The error in words, with the system's text for an `errno`, e.g. `open /proc/pressure/memory:
    /// No such file or directory (errno 2)`.
    var description: String {
        switch self {
        case .system(let operation, let path, let code):
            let text = ErrnoText.of(code)
            return "\(operation) \(path): \(text) (errno \(code))"
        case .notPressureFile(let path, let reason):
            return "\(path) is not a PSI file: \(reason)"
        }
    }
}
