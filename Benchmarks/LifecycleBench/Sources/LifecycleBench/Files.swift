import BenchDBus
#if canImport(Glibc)
import Glibc
#endif

/// Small file and cgroup helpers.
enum Cgroup {
    /// Moves the calling process into the group at `directory`.
    static func join(_ directory: String) throws(BenchError) {
        try writeText("\(getpid())", to: "\(directory)/cgroup.procs")
    }

    /// The mount point of the first cgroup2 file system in `/proc/self/mountinfo`.
    static func mount() -> String? {
        for line in (readText("/proc/self/mountinfo") ?? "").split(separator: "\n") {
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
            let fields = halves[0].split(separator: " ")
            if fields.count >= 5 { return String(fields[4]) }
        }
        return nil
    }
}

/// The whole text of a (small) file, or `nil` when it cannot be read.
func readText(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 8192)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}
