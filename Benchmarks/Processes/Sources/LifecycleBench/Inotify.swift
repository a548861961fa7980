import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// An inotify instance watching `cgroup.events` files for modification (the kernel notifies it
/// when `populated` or `frozen` changes).
final class EventsWatch {
    private let descriptor: Int32
    private var watches: [Int32: String] = [:]

    init() throws {
        descriptor = inotify_init1(Int32(O_NONBLOCK | O_CLOEXEC))
        guard descriptor >= 0 else { throw HarnessError("inotify_init1: \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    func watch(_ path: String) throws {
        let watch = inotify_add_watch(descriptor, path, UInt32(IN_MODIFY))
        guard watch >= 0 else { throw HarnessError("inotify_add_watch \(path): \(String(cString: strerror(errno)))") }
        watches[watch] = path
    }

    /// Discards the events that have arrived.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Waits (up to `timeoutMilliseconds`) until `path` reads a line `expected` after a
    /// modification event for it, and returns CLOCK_MONOTONIC at that read; `nil` on timeout.
    func wait(for expected: String, in path: String, timeoutMilliseconds: Int64 = 5000) -> Int64? {
        let deadline = monotonicNanoseconds() + timeoutMilliseconds * 1_000_000
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = (deadline - monotonicNanoseconds()) / 1_000_000
            if left <= 0 { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 100))) > 0 else {
                if (readFile(path) ?? "").split(separator: "\n").contains(Substring(expected)) { return monotonicNanoseconds() }
                continue
            }
            var mine = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                var offset = 0
                while offset + 16 <= count {
                    let watch = buffer[offset..<offset + 4].reversed().reduce(Int32(0)) { $0 << 8 | Int32($1) }
                    let length = buffer[offset + 12..<offset + 16].reversed().reduce(Int(0)) { $0 << 8 | Int($1) }
                    if watches[watch] == path { mine = true }
                    offset += 16 + length
                }
            }
            if mine, (readFile(path) ?? "").split(separator: "\n").contains(Substring(expected)) { return monotonicNanoseconds() }
        }
    }
}
