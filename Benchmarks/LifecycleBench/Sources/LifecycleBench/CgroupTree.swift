import BenchDBus
#if canImport(Glibc)
import Glibc
#endif

/// One app scope of the run's tree (`app-bench-<app-id>-1.scope` in its `app.slice`).
struct Scope {
    let name: String
    /// Its path in the hierarchy, as in the `0::` line of `/proc/PID/cgroup`.
    let group: String
    let directory: String

    var events: String { directory + "/cgroup.events" }

    /// Whether its `cgroup.events` says `frozen 1` (every process in it has stopped).
    var isFrozen: Bool { (readText(events) ?? "").split(separator: "\n").contains("frozen 1") }

    /// Whether its own `cgroup.freeze` is 1.
    var freezeBit: Bool { readText(directory + "/cgroup.freeze")?.hasPrefix("1") ?? false }

    /// The PIDs in it.
    var processes: [pid_t] { (readText(directory + "/cgroup.procs") ?? "").split(separator: "\n").compactMap { pid_t($0) } }

    func setFreeze(_ frozen: Bool) throws(BenchError) { try writeText(frozen ? "1" : "0", to: directory + "/cgroup.freeze") }

    /// Writes 1 to its `cgroup.freeze` and waits (up to 5 s) for `frozen 1`.
    func freezeAndWait() throws(BenchError) {
        try setFreeze(true)
        for _ in 0..<5000 where !isFrozen { usleep(1000) }
        guard isFrozen else { throw BenchError("\(name) did not freeze within 5 s") }
    }
}

/// The run's private cgroup tree under the cgroup2 mount, shaped like a user session:
/// `<top>/bench` (this process and everything it starts but the apps), `<top>/user@0.service/app.slice`
/// (notifybusd's cgroup root) and the app scopes in it. `remove()` thaws every group, kills what
/// is left in the scopes (`cgroup.kill`), moves this process back to the root group and removes
/// the groups, deepest first.
final class CgroupTree {
    let mount: String
    let top: String
    /// `app.slice` as a path in the hierarchy: the daemon's `cgroup-root`.
    let appSlice: String
    private var made: [String] = []
    private(set) var scopes: [Scope] = []

    init(name: String) throws(BenchError) {
        guard let mount = Cgroup.mount() else { throw BenchError("no cgroup2 mount in /proc/self/mountinfo") }
        self.mount = mount
        top = "\(mount)/\(name)"
        appSlice = "/\(name)/user@0.service/app.slice"
        for directory in [top, top + "/bench", top + "/user@0.service", mount + appSlice] {
            guard mkdir(directory, 0o755) == 0 else { throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))") }
            made.append(directory)
        }
        try Cgroup.join(top + "/bench")
    }

    /// A new scope for `appID`.
    func makeScope(for appID: String) throws(BenchError) -> Scope {
        let name = "app-bench-\(appID)-1.scope"
        let directory = mount + appSlice + "/" + name
        guard mkdir(directory, 0o755) == 0 else { throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))") }
        made.append(directory)
        let scope = Scope(name: name, group: appSlice + "/" + name, directory: directory)
        scopes.append(scope)
        return scope
    }

    func remove() {
        for directory in made.reversed() { try? writeText("0", to: directory + "/cgroup.freeze") }
        for scope in scopes { try? writeText("1", to: scope.directory + "/cgroup.kill") }
        try? writeText("\(getpid())", to: mount + "/cgroup.procs")
        for directory in made.reversed() {
            for _ in 0..<300 {
                if rmdir(directory) == 0 || errno == ENOENT { break }
                usleep(10_000)
            }
        }
        made = []
        scopes = []
    }
}

func writeText(_ text: String, to path: String) throws(BenchError) {
    let descriptor = open(path, O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw BenchError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    guard write(descriptor, bytes, bytes.count) == bytes.count else {
        throw BenchError("write \(path): \(String(cString: strerror(errno)))")
    }
}
