#if canImport(Glibc)
package import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Small files written whole: a control file of the cgroup file system (`cgroup.freeze`), and
/// a state file replaced atomically.
extension SmallFile {
    /// Writes `text` to the existing file at `path` in one `write` (a control file takes one
    /// write as one command). Wraps `open` and `write`.
    /// - Returns: `nil` on success, else the error of `open` or `write`.
    package static func write(_ text: String, toExisting path: String) -> ReadError? {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return ReadError(errno: errno) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        while true {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written == bytes.count { return nil }
            if written < 0, errno == EINTR { continue }
            return ReadError(errno: written < 0 ? errno : EIO)
        }
    }

    /// Replaces the file at `path` with `text`: written to a temporary file beside it (mode
    /// `mode`), flushed, then renamed over it, so a reader sees the old contents or the new, never
    /// a part. Wraps `open`, `write`, `fsync` and `rename`.
    /// - Returns: `nil` on success, else the error of the first call that failed.
    package static func replace(_ path: String, with text: String, mode: mode_t = 0o600) -> ReadError? {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { return ReadError(errno: errno) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = ReadError(errno: errno)
                close(fd)
                unlink(temporary)
                return error
            }
            bytes = bytes.dropFirst(written)
        }
        if fsync(fd) != 0 {
            let error = ReadError(errno: errno)
            close(fd)
            unlink(temporary)
            return error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = ReadError(errno: errno)
            unlink(temporary)
            return error
        }
        return nil
    }
}
