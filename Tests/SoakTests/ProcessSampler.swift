import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// One reading of a process's resources.
struct ResourceSample: Sendable {
    /// Seconds since sampling began.
    var time: Double
    /// Resident set size in KiB (`VmRSS` of /proc/PID/status).
    var rssKiB: Int
    /// Open file descriptors (entries of /proc/PID/fd).
    var descriptors: Int
}

/// Reads a process's resident memory and open descriptors from /proc, periodically.
final class ProcessSampler: Sendable {
    let pid: pid_t
    private let start = ContinuousClock.now
    private let taken = Mutex<[ResourceSample]>([])

    init(pid: pid_t) {
        self.pid = pid
    }

    /// The samples taken so far, oldest first.
    var samples: [ResourceSample] { taken.withLock { $0 } }

    /// Takes one sample; `nil` when the process is gone.
    @discardableResult
    func sample() -> ResourceSample? {
        guard let rss = Self.residentKiB(pid), let descriptors = Self.openDescriptors(pid) else { return nil }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sample = ResourceSample(time: seconds, rssKiB: rss, descriptors: descriptors)
        taken.withLock { $0.append(sample) }
        return sample
    }

    /// Samples every `interval` until `deadline`.
    func run(every interval: Duration, until deadline: ContinuousClock.Instant) async {
        while ContinuousClock.now < deadline {
            sample()
            try? await Task.sleep(for: interval)
        }
    }

    /// `VmRSS` of /proc/PID/status, in KiB.
    static func residentKiB(_ pid: pid_t) -> Int? {
        guard let status = readProcFile("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    /// The number of entries of /proc/PID/fd.
    static func openDescriptors(_ pid: pid_t) -> Int? {
        guard let directory = opendir("/proc/\(pid)/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0.first == UInt8(ascii: ".") }
            if !isDot { count += 1 }
        }
        return count
    }

    /// A /proc file (their size is 0, so read until the end).
    private static func readProcFile(_ path: String) -> String? { ProcessStats.readText(path) }
}

/// What the samples of a soak say: start, maximum and end of each figure, and the thirds of the
/// samples after the warm-up, compared.
struct ResourceFigures: Sendable, CustomStringConvertible {
    var samples: [ResourceSample]
    /// The samples after the warm-up.
    var measured: [ResourceSample]

    init(samples: [ResourceSample], warmUp: Double) {
        self.samples = samples
        measured = samples.filter { $0.time >= warmUp }
    }

    private var thirds: (first: ArraySlice<ResourceSample>, last: ArraySlice<ResourceSample>) {
        let third = measured.count / 3
        return (measured.prefix(third), measured.suffix(third))
    }

    /// The largest RSS of the first and of the last third after the warm-up, in KiB.
    var rssThirds: (first: Int, last: Int) {
        (thirds.first.map(\.rssKiB).max() ?? 0, thirds.last.map(\.rssKiB).max() ?? 0)
    }

    /// The fewest and most descriptors of the first and of the last third after the warm-up.
    var descriptorThirds: (first: ClosedRange<Int>, last: ClosedRange<Int>) {
        func range(_ part: ArraySlice<ResourceSample>) -> ClosedRange<Int> {
            let counts = part.map(\.descriptors)
            return (counts.min() ?? 0)...(counts.max() ?? 0)
        }
        return (range(thirds.first), range(thirds.last))
    }

    var description: String {
        let rss = samples.map(\.rssKiB)
        let fds = samples.map(\.descriptors)
        return """
            RSS KiB: start \(rss.first ?? 0), max \(rss.max() ?? 0), end \(rss.last ?? 0) \
            (after warm-up, largest in the first third \(rssThirds.first), in the last third \(rssThirds.last)); \
            fds: start \(fds.first ?? 0), max \(fds.max() ?? 0), end \(fds.last ?? 0) \
            (after warm-up, first third \(descriptorThirds.first), last third \(descriptorThirds.last)); \
            \(samples.count) samples
            """
    }
}
