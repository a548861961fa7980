import BenchDBus
import ChildProcess
#if canImport(Glibc)
import Glibc
#endif

/// A private session bus (its own `dbus-daemon`) in `directory`, the portal stand-in on it
/// (`BenchPortal`, the events' source), and a `notifybusd` serving on it.
final class Bus {
    static let daemonName = "org.notifybus.Bus1"
    static let daemonPath = "/org/notifybus/Bus1"

    let directory: String
    let address: String
    let portal: BenchPortal
    private let busDaemon: ChildProcess
    private(set) var notifybusd: ChildProcess?

    /// Starts the bus in `directory` (made here) and the portal with `settings` stored.
    init(directory: String, settings: [String: [String: Int64]]) throws(BenchError) {
        guard mkdir(directory, 0o755) == 0 else { throw BenchError("mkdir \(directory): \(String(cString: strerror(errno)))") }
        self.directory = directory
        let configuration = """
            <busconfig><type>session</type><listen>unix:path=\(directory)/bus</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/>
            <allow receive_sender="*"/></policy></busconfig>
            """
        guard let file = fopen("\(directory)/bus.conf", "w") else { throw BenchError("cannot write bus.conf") }
        fputs(configuration, file)
        fclose(file)
        busDaemon = try ChildProcess.start(
            ["/usr/bin/dbus-daemon", "--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile", "--print-address=1"],
            standardError: "\(directory)/dbus-daemon.log")
        guard let printed = busDaemon.readLine(timeout: .seconds(10)) else {
            throw BenchError("dbus-daemon did not start: \(readText("\(directory)/dbus-daemon.log") ?? "")")
        }
        address = printed
        portal = try BenchPortal(address: address)
        for (namespace, values) in settings {
            for (key, value) in values { portal.store(namespace: namespace, key: key, value: value) }
        }
    }

    /// Starts `notifybusd --session-bus ADDRESS arguments…` with `environment`, and waits until
    /// it owns its name (serving the portal meanwhile).
    func startDaemon(_ path: String, _ arguments: [String], environment: [String: String]) throws(BenchError) {
        let log = "\(directory)/notifybusd.log"
        notifybusd = try ChildProcess.start(
            [path, "--session-bus", address] + arguments,
            environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { _, new in new }, standardError: log)
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while monotonicNanoseconds() < deadline {
            portal.serve()
            if case .bool(true)? = try portal.connection.callBus("NameHasOwner", [.string(Self.daemonName)]).first { return }
            usleep(10_000)
        }
        throw BenchError("notifybusd did not own \(Self.daemonName) within 20 s: \(readText(log) ?? "")")
    }

    var notifybusdPID: pid_t { notifybusd?.pid ?? 0 }

    /// The daemon's log so far.
    var daemonLog: String { readText("\(directory)/notifybusd.log") ?? "" }

    /// `Snapshot(patterns)` of the daemon: key → JSON text.
    func snapshot(_ patterns: [String]) throws(BenchError) -> [String: String] {
        let reply = try portal.connection.call(
            destination: Self.daemonName, path: Self.daemonPath, interface: Self.daemonName, member: "Snapshot", [.strings(patterns)])
        var values: [String: String] = [:]
        for case .structure(let pair) in reply.first?.elements ?? [] where pair.count == 2 {
            if let key = pair[0].stringValue, let value = pair[1].stringValue { values[key] = value }
        }
        return values
    }

    /// Waits until the daemon's store has `values` (keys `settings/<namespace>/<key>`): its source
    /// has read every signal sent so far.
    func waitUntilDaemonHas(namespace: String, _ values: [String: Int64]) throws(BenchError) {
        let expected = Dictionary(uniqueKeysWithValues: values.map { ("settings/\(namespace)/\($0.key)", "\($0.value)") })
        let deadline = monotonicNanoseconds() + 30_000_000_000
        while monotonicNanoseconds() < deadline {
            portal.serve()
            let snapshot = try self.snapshot(["settings/\(namespace)/**"])
            if expected.allSatisfy({ snapshot[$0.key] == $0.value }) { return }
            usleep(2_000)
        }
        throw BenchError("the daemon did not reach the values sent to settings/\(namespace) within 30 s")
    }

    /// Starts `executable subscriber --address … --cgroup group` with `options`, and waits until
    /// it is subscribed (serving the portal meanwhile); its standard error goes to `<name>.log` here.
    func subscriber(_ executable: String, name: String, cgroup: String, _ options: [String]) throws(BenchError) -> ChildProcess {
        let log = "\(directory)/\(name).log"
        let child = try ChildProcess.start(
            [executable, "subscriber", "--address", address, "--cgroup", cgroup] + options, standardError: log)
        guard let line = child.readLine(timeout: .seconds(60), meanwhile: portal.serve), line == "ready" else {
            throw BenchError("subscriber \(name) did not start: \(readText(log) ?? "")")
        }
        return child
    }

    /// The app's own service (`LifecycleBench responder`) owning `name`, inside `cgroup`.
    func responder(_ executable: String, name: String, cgroup: String) throws(BenchError) -> ChildProcess {
        let log = "\(directory)/responder.log"
        let child = try ChildProcess.start(
            [executable, "responder", "--address", address, "--cgroup", cgroup, "--name", name], standardError: log)
        guard let line = child.readLine(timeout: .seconds(30), meanwhile: portal.serve), line == "ready" else {
            throw BenchError("the responder \(name) did not start: \(readText(log) ?? "")")
        }
        return child
    }

    /// Stops the daemon (SIGTERM: it thaws what it froze before exiting) and the bus.
    func stop() {
        notifybusd?.terminate()
        notifybusd = nil
        busDaemon.terminate()
    }
}
