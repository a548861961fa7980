import BenchDBus
import ChildProcess
#if canImport(Glibc)
import Glibc
#endif

/// A private session bus (its own `dbus-daemon`), the portal stand-in on it, and `notifybusd
/// --source settings` serving on it; everything is stopped and removed on `stop()`.
final class Testbed {
    static let busName = "org.notifybus.Bus1"
    static let busPath = "/org/notifybus/Bus1"

    let directory: String
    let address: String
    let portal: BenchPortal
    private let busDaemon: ChildProcess
    private(set) var notifybusd: ChildProcess?

    /// Starts the bus and the portal (with `settings` stored), then the daemon at `notifybusd`.
    /// `limits` are `<limit>`s added to the bus's configuration (e.g. `max_outgoing_bytes`: what
    /// it queues for one connection that does not read).
    init(notifybusd path: String, settings: [String: [String: Int64]], limits: [String: Int] = [:]) throws(BenchError) {
        var template = Array("/tmp/notifybus-daemon-bench.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("mkdtemp failed") }
        directory = String(cString: made)
        let configuration = """
            <busconfig><type>session</type><listen>unix:path=\(directory)/bus</listen><auth>EXTERNAL</auth>
            <limit name="max_connections_per_user">4096</limit><limit name="max_completed_connections">4096</limit>
            <limit name="max_match_rules_per_connection">4096</limit>
            \(limits.sorted { $0.key < $1.key }.map { "<limit name=\"\($0.key)\">\($0.value)</limit>" }.joined())
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
        let daemon = try ChildProcess.start(
            [path, "--session-bus", address, "--source", "settings"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": address], standardError: "\(directory)/notifybusd.log")
        notifybusd = daemon
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while monotonicNanoseconds() < deadline {
            portal.serve()
            if case .bool(true)? = try portal.connection.callBus("NameHasOwner", [.string(Self.busName)]).first { return }
            usleep(10_000)
        }
        throw BenchError("notifybusd did not own \(Self.busName) within 20 s: \(readText("\(directory)/notifybusd.log") ?? "")")
    }

    /// The process IDs of the bus (`dbus-daemon`) and of `notifybusd`.
    var busDaemonPID: pid_t { busDaemon.pid }
    var notifybusdPID: pid_t { notifybusd?.pid ?? 0 }

    /// `Snapshot(patterns)` of the daemon: key → JSON text.
    func snapshot(_ patterns: [String]) throws(BenchError) -> [String: String] {
        let reply = try portal.connection.call(
            destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "Snapshot", [.strings(patterns)])
        var values: [String: String] = [:]
        for case .structure(let pair) in reply.first?.elements ?? [] where pair.count == 2 {
            if let key = pair[0].stringValue, let value = pair[1].stringValue { values[key] = value }
        }
        return values
    }

    /// Waits until the daemon's store has `values` (keys `settings/<namespace>/<key>`): its source
    /// has read every signal sent so far. The `Snapshot` call also passes behind those signals in
    /// the bus's queue of this connection, so the bus has routed them to every other receiver too.
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

    /// Stops the daemon (SIGTERM) and the bus, and removes the directory with the logs in it.
    func stop() {
        notifybusd?.terminate()
        notifybusd = nil
        busDaemon.terminate()
        if let entries = opendir(directory) {
            var names: [String] = []
            while let entry = readdir(entries) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != ".", name != ".." { names.append(name) }
            }
            closedir(entries)
            for name in names { unlink("\(directory)/\(name)") }
        }
        rmdir(directory)
    }
}

extension Testbed {
    /// Starts `executable subscriber --address … --kind kind` with `options`, and waits until it
    /// is ready (serving the portal meanwhile); its standard error goes to `<name>.log` here.
    func subscriber(
        _ executable: String, kind: Subscriber.Kind, name: String, _ options: [String]
    ) throws(BenchError) -> ChildProcess {
        try subscriberWithNames(executable, kind: kind, name: name, options).child
    }

    /// The same, with the unique names of its connections (which a `unicast` subscriber prints
    /// after `ready`).
    func subscriberWithNames(
        _ executable: String, kind: Subscriber.Kind, name: String, _ options: [String]
    ) throws(BenchError) -> (child: ChildProcess, names: [String]) {
        let log = "\(directory)/\(name).log"
        let child = try ChildProcess.start(
            [executable, "subscriber", "--address", address, "--kind", kind.rawValue] + options, standardError: log)
        guard let line = child.readLine(timeout: .seconds(60), meanwhile: portal.serve), line.hasPrefix("ready") else {
            throw BenchError("subscriber \(name) did not start: \(readText(log) ?? "")")
        }
        return (child, line.split(separator: " ").dropFirst().map(String.init))
    }
}
