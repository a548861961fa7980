import Harness

#if canImport(Glibc)
import Glibc
#endif

/// A private session bus (a harness `PrivateBus`), the XDG portal's Settings served on it by the
/// benchmark itself (`BenchPortal`: the events' source, each change's send time the benchmark's
/// own clock), and `notifybusd` serving on it once `startDaemon` is called; the benchmark's helper
/// processes (subscribers, services) talk on it. `stop()` ends the daemon and the bus; the bus's
/// directory, with every log in it, goes with the object.
public final class BenchBed {
    /// notifybusd's name and its bus object.
    public static let daemonName = "org.notifybus.Bus1"
    /// notifybusd's object.
    public static let daemonPath = "/org/notifybus/Bus1"

    /// The bus.
    public let bus: PrivateBus
    /// The portal on it.
    public let portal: BenchPortal
    /// notifybusd, once started.
    public private(set) var notifybusd: ChildProcess?

    /// The bus's directory: its configuration and socket, and the logs of every process here.
    public var directory: String { bus.directory }
    /// The bus's address.
    public var address: String { bus.address }
    /// The bus daemon's process ID.
    public var busDaemonPID: pid_t { bus.pid ?? 0 }
    /// notifybusd's process ID (0 before it started).
    public var notifybusdPID: pid_t { notifybusd?.pid ?? 0 }
    /// notifybusd's log so far.
    public var daemonLog: String { readFile(directory + "/notifybusd.log") ?? "" }

    /// Starts the bus and the portal with `settings` stored (namespace → key → value). `limits` are
    /// `<limit>`s of the bus beyond the bed's (4,096 connections per user and match rules per
    /// connection), e.g. `max_outgoing_bytes`: what it queues for one connection that does not read.
    public convenience init(settings: [String: [String: Int64]], limits: [String: Int] = [:]) throws {
        let bedLimits = ["max_connections_per_user": 4096, "max_completed_connections": 4096, "max_match_rules_per_connection": 4096]
        try self.init(bus: try PrivateBus(.session, limits: bedLimits.merging(limits) { _, new in new }), settings: settings)
    }

    /// The bed on `bus`, a bus another program may run (a systemd user manager's), with the
    /// portal and `settings` on it.
    public init(bus: PrivateBus, settings: [String: [String: Int64]]) throws {
        self.bus = bus
        portal = try BenchPortal(address: bus.address)
        for (namespace, values) in settings {
            for (key, value) in values { portal.store(namespace: namespace, key: key, value: value) }
        }
    }

    /// Starts `notifybusd --session-bus ADDRESS arguments…` (`path`; its environment this process's
    /// with `environment`), and waits (up to 20 s) until it owns its name, serving the portal meanwhile.
    public func startDaemon(_ path: String, _ arguments: [String] = ["--source", "settings"], environment: [String: String] = [:]) throws {
        notifybusd = try ChildProcess.start(
            [path, "--session-bus", address] + arguments,
            environment: environment.merging(["DBUS_SESSION_BUS_ADDRESS": address]) { _, new in new },
            standardError: directory + "/notifybusd.log")
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while monotonicNanoseconds() < deadline {
            portal.serve()
            if case .bool(true)? = try portal.connection.callBus("NameHasOwner", [.string(Self.daemonName)]).first { return }
            usleep(10_000)
        }
        throw HarnessError("notifybusd did not own \(Self.daemonName) within 20 s: \(daemonLog)")
    }

    /// `Snapshot(patterns)` of the daemon: key → JSON text.
    public func snapshot(_ patterns: [String]) throws -> [String: String] {
        let reply = try portal.connection.call(
            destination: Self.daemonName, path: Self.daemonPath, interface: Self.daemonName, member: "Snapshot", [.strings(patterns)])
        var values: [String: String] = [:]
        for case .structure(let pair) in reply.first?.elements ?? [] where pair.count == 2 {
            if let key = pair[0].stringValue, let value = pair[1].stringValue { values[key] = value }
        }
        return values
    }

    /// Waits (up to 30 s) until the daemon's store has `values` (keys `settings/<namespace>/<key>`):
    /// its source has read every signal sent so far. The `Snapshot` call also passes behind those
    /// signals in the bus's queue of this connection, so the bus has routed them to every other
    /// receiver too.
    public func waitUntilDaemonHas(namespace: String, _ values: [String: Int64]) throws {
        let expected = Dictionary(uniqueKeysWithValues: values.map { ("settings/\(namespace)/\($0.key)", "\($0.value)") })
        let deadline = monotonicNanoseconds() + 30_000_000_000
        while monotonicNanoseconds() < deadline {
            portal.serve()
            let snapshot = try self.snapshot(["settings/\(namespace)/**"])
            if expected.allSatisfy({ snapshot[$0.key] == $0.value }) { return }
            usleep(2_000)
        }
        throw HarnessError("the daemon did not reach the values sent to settings/\(namespace) within 30 s")
    }

    /// Starts a helper, `arguments` (the first an absolute path, the second its mode), and waits
    /// (up to `timeout`, serving the portal meanwhile) for its first line, which must begin with
    /// `ready`; its standard error goes to `<name>.log` here. The helper and the words after `ready`.
    public func helper(_ arguments: [String], name: String, timeout: Duration = .seconds(60)) throws
        -> (child: ChildProcess, words: [String])
    {
        let log = "\(directory)/\(name).log"
        let child = try ChildProcess.start(arguments, standardError: log)
        guard let line = child.readLine(timeout: timeout, meanwhile: portal.serve), line.hasPrefix("ready") else {
            child.terminate(signal: SIGKILL)
            throw HarnessError("\(name) did not start: \(readFile(log) ?? "")")
        }
        return (child, line.split(separator: " ").dropFirst().map(String.init))
    }

    /// Starts `executable subscriber --address … --kind kind` with `options` (`Subscriber`), and waits
    /// until it is subscribed; its process and the unique names of its connections (which a `unicast`
    /// subscriber prints after `ready`).
    public func subscriber(_ executable: String, kind: Subscriber.Kind, name: String, _ options: [String]) throws
        -> (child: ChildProcess, names: [String])
    {
        let started = try helper([executable, "subscriber", "--address", address, "--kind", kind.rawValue] + options, name: name)
        return (started.child, started.words)
    }

    /// Stops the daemon (SIGTERM: it thaws what it froze before exiting) and the bus.
    public func stop() {
        notifybusd?.terminate()
        notifybusd = nil
        bus.stop()
    }
}
