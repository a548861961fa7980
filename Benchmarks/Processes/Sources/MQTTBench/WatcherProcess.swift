import Harness
import EpollLoop
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `notifywatch --mqtt URL --mqtt-prefix PREFIX --json` as a child process, its standard output
/// read on a loop of its own: every line counted, and each (host, key)'s latest value kept, for
/// hosts `host-N` and keys `kM`.
final class WatcherProcess: Sendable {
    private let process: ChildProcess
    let progress: WatcherProgress
    private let loop: EventLoopThread
    private let key = LoopLocalKey<LineReader>()

    init(executable: String, broker: MosquittoBroker, prefix: String, hosts: Int, keys: Int, finalValue: Int) throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe: errno \(errno)") }
        // Neither end is inherited by a later child (the spawn gives notifywatch the write end
        // as its standard output).
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { close(fds[1]) }
        do {
            process = try ChildProcess(
                executable: executable, arguments: ["--mqtt", broker.url, "--mqtt-prefix", prefix, "--json"],
                standardInput: .inherit, standardOutput: .descriptor(fds[1]), standardError: .append("\(broker.directory)/notifywatch.log"))
        } catch {
            close(fds[0])
            throw error
        }
        let progress = WatcherProgress(slots: hosts * keys)
        self.progress = progress
        loop = try EventLoopThread(name: "watch-reader")
        let key = self.key
        let fd = fds[0]
        try loop.execute { context in
            let reader = LineReader(fd: fd, keys: keys, slots: hosts * keys, finalValue: finalValue, progress: progress)
            context[local: key] = reader
            reader.registration = try? context.register(fileDescriptor: fd, interest: .readable) { [weak reader] _ in
                reader?.readable(context)
            }
        }
    }

    /// The CPU time the reading thread has used so far.
    func readerCPU() async -> Duration {
        (try? await loop.submit { _ in threadCPU() }) ?? .zero
    }

    /// Ends notifywatch (SIGTERM) and the reading; returns notifywatch's CPU time.
    func stop() async -> Duration {
        process.terminate(timeout: .seconds(60))
        let key = self.key
        _ = try? await loop.submit { context in
            context[local: key]?.close(context)
            context[local: key] = nil
        }
        await loop.shutdown()
        return process.cpuTime ?? .zero
    }
}

/// What the reader has seen so far; read from any thread.
final class WatcherProgress: Sendable {
    let slots: Int
    /// Lines printed.
    let lines = Atomic<Int>(0)
    /// `notification` lines printed.
    let notifications = Atomic<Int>(0)
    /// (host, key)s with a value.
    let slotsSeen = Atomic<Int>(0)
    /// (host, key)s whose latest value is the final one.
    let slotsFinal = Atomic<Int>(0)
    /// When the last (host, key) reached the final value.
    let allFinalAt = Mutex<ContinuousClock.Instant?>(nil)

    init(slots: Int) { self.slots = slots }

    var allSeen: Bool { slotsSeen.load(ordering: .acquiring) == slots }
    var allFinal: Bool { slotsFinal.load(ordering: .acquiring) == slots }
}

/// Reads notifywatch's lines on the loop thread.
final class LineReader {
    let fd: Int32
    let keys: Int
    let finalValue: Int
    let progress: WatcherProgress
    var registration: IORegistration?
    private var values: [Int?]
    private var pending: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)
    private static let notification = Array(#"{"type":"notification""#.utf8)

    init(fd: Int32, keys: Int, slots: Int, finalValue: Int, progress: WatcherProgress) {
        self.fd = fd
        self.keys = keys
        self.finalValue = finalValue
        self.progress = progress
        values = Array(repeating: nil, count: slots)
    }

    func readable(_ context: LoopContext) {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR || errno == EAGAIN { return }
        guard count > 0 else {
            close(context)
            return
        }
        pending += chunk[0..<count]
        var start = 0
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            line(pending[start..<newline])
            start = newline + 1
        }
        pending.removeFirst(start)
    }

    func close(_ context: LoopContext) {
        guard let registration else { return }
        context.deregister(registration)
        self.registration = nil
        Glibc.close(fd)
    }

    /// One JSON line: `{"type":"notification",…,"host":"host-N","key":"kM","value":V,…}`.
    private func line(_ bytes: ArraySlice<UInt8>) {
        _ = progress.lines.wrappingAdd(1, ordering: .relaxed)
        guard bytes.starts(with: Self.notification) else { return }
        _ = progress.notifications.wrappingAdd(1, ordering: .relaxed)
        guard let host = Self.number(after: #""host":"host-"#, in: bytes), let key = Self.number(after: #""key":"k"#, in: bytes),
              let value = Self.number(after: #""value":"#, in: bytes), key < keys, host * keys + key < values.count
        else { return }
        let slot = host * keys + key
        let before = values[slot]
        values[slot] = value
        if before == nil { _ = progress.slotsSeen.wrappingAdd(1, ordering: .releasing) }
        if value == finalValue, before != finalValue {
            let reached = progress.slotsFinal.wrappingAdd(1, ordering: .releasing).newValue
            if reached == progress.slots {
                let now = ContinuousClock.now
                progress.allFinalAt.withLock { $0 = $0 ?? now }
            }
        } else if value != finalValue, before == finalValue {
            _ = progress.slotsFinal.wrappingSubtract(1, ordering: .releasing)
        }
    }

    /// The integer right after the first `marker` in `bytes`, if any.
    static func number(after marker: String, in bytes: ArraySlice<UInt8>) -> Int? {
        let needle = Array(marker.utf8)
        guard bytes.count >= needle.count else { return nil }
        var index = bytes.startIndex
        while index + needle.count <= bytes.endIndex {
            if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) {
                var position = index + needle.count
                var negative = false
                if position < bytes.endIndex, bytes[position] == UInt8(ascii: "-") {
                    negative = true
                    position += 1
                }
                var result: Int?
                while position < bytes.endIndex, bytes[position] >= 48, bytes[position] <= 57 {
                    result = (result ?? 0) * 10 + Int(bytes[position] - 48)
                    position += 1
                }
                return result.map { negative ? -$0 : $0 }
            }
            index += 1
        }
        return nil
    }
}

/// The CPU time of the calling thread.
func threadCPU() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
}
