#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads files whole, up to a limit: configuration and zoneinfo files, and those of /proc and of
/// the cgroup file system, whose size `stat` does not tell (it says 0 or 4096), read until end of
/// file; an event log or standard input with a larger limit. Shared by the sources, the daemon and
/// the tools.
package enum SmallFile {
    /// Why a file could not be read.
    package struct ReadError: Error, Equatable, CustomStringConvertible {
        /// The `errno` of `open` or `read`.
        package let errno: Int32

        /// Whether the file is not there, or no longer (`ENOENT`; `ESRCH` from a process's files
        /// once it has exited).
        package var isMissing: Bool { errno == ENOENT || errno == ESRCH || errno == ENODEV }

        /// The system's text for `errno`.
        package var description: String { ErrnoText.of(errno) }
    }

    /// The first `limit` bytes of the file at `path`. Wraps `open`.
    package static func contents(of path: String, limit: Int = 65_536) -> Result<[UInt8], ReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadError(errno: errno)) }
        defer { close(fd) }
        return contents(ofDescriptor: fd, limit: limit)
    }

    /// The first `limit` bytes read from `fd` (a file, a pipe, standard input) until its end.
    /// Wraps `read`.
    ///
    /// It reads through a buffer on the stack: a 4 KiB buffer from `malloc` on every read (notifybusd
    /// reads a `/proc/PID/stat` after each send) is a request large enough that glibc
    /// first consolidates its fast bins (`malloc_consolidate`, at the top of a `perf` profile of
    /// the daemon in its latency benchmark).
    package static func contents(ofDescriptor fd: Int32, limit: Int = 65_536) -> Result<[UInt8], ReadError> {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { chunk in
            var bytes: [UInt8] = []
            while bytes.count < limit {
                let count = read(fd, chunk.baseAddress, min(chunk.count, limit - bytes.count))
                if count == 0 { break }
                if count < 0 {
                    if errno == EINTR { continue }
                    return .failure(ReadError(errno: errno))
                }
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            }
            return .success(bytes)
        }
    }

    /// Whether the file at `path` can be opened for reading. Wraps `open`.
    package static func isReadable(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// The text of the file at `path` (UTF-8, up to `limit` bytes), or `nil` when it cannot be read.
    package static func text(of path: String, limit: Int = 1 << 20) -> String? {
        guard case .success(let bytes) = contents(of: path, limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
