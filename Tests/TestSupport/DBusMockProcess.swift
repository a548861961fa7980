import Harness

#if canImport(Glibc)
import Glibc
#endif

/// A python-dbusmock process owning a name of our choosing on a private bus: a plain mock (one
/// object at a path with an interface, python-dbusmock's own form), or one of our templates that
/// takes its name from `NOTIFYBUS_MOCK_BUS_NAME` (`Fixtures/mpris_player.py`), so that several
/// of them run side by side. Only its own PID is ever signalled; it is killed when this object
/// goes away (SIGKILL, which ends a suspended one too).
public final class DBusMockProcess: Sendable {
    /// The bus it is on.
    public let bus: PrivateBus
    /// The name it owns.
    public let name: String
    /// The `python3 -m dbusmock` process.
    public let process: ChildProcess
    /// The owner's unique name once it started.
    public let owner: String

    /// Its process ID.
    public var pid: Int32 { process.pid }

    /// Starts a plain mock owning `name`, with one object at `path` serving `interface`, and
    /// waits until it owns the name.
    public convenience init(bus: PrivateBus, name: String, path: String, interface: String) async throws {
        try await self.init(bus: bus, name: name, arguments: [name, path, interface], environment: [:])
    }

    /// Starts the template `template` (a file's path, or the name of one of python-dbusmock's) under
    /// `name` (passed as `NOTIFYBUS_MOCK_BUS_NAME`) with `parameters` (JSON), and waits until it
    /// owns the name. With `group` (a cgroup's directory) the process joins that group before
    /// python starts, as an app's service would run in the app's scope.
    public convenience init(
        bus: PrivateBus, template: String, name: String, parameters: String? = nil, group: String? = nil
    ) async throws {
        try await self.init(
            bus: bus, name: name, arguments: ["-t", template] + (parameters.map { ["-p", $0] } ?? []),
            environment: ["NOTIFYBUS_MOCK_BUS_NAME": name], group: group)
    }

    private init(
        bus: PrivateBus, name: String, arguments: [String], environment: [String: String?], group: String? = nil
    ) async throws {
        self.bus = bus
        self.name = name
        var extra = environment
        extra["PYTHONDONTWRITEBYTECODE"] = "1"
        let command = ["/usr/bin/python3", "-m", "dbusmock", bus.kind == .system ? "--system" : "--session"] + arguments
        // In a group: a shell writes its own PID to the group's `cgroup.procs`, then becomes python.
        let (executable, words) = group.map { ("/bin/sh", ["-c", "echo $$ > '\($0)/cgroup.procs' && exec \"$@\"", "sh"] + command) }
            ?? (command[0], Array(command.dropFirst()))
        process = try ChildProcess(
            executable, words, environment: bus.environment(extra: extra), log: "\(bus.directory)/mock-\(name).log")
        let process = self.process
        owner = try await bus.waitForOwner(of: name) {
            process.hasExited ? "python3 -m dbusmock exited; see \(bus.directory)/mock-\(name).log" : nil
        }
    }

    /// Stops the process where it stands (SIGSTOP): it answers nothing until `resume()`.
    public func suspend() {
        if !process.hasExited { kill(process.pid, SIGSTOP) }
    }

    /// Lets a suspended process go on (SIGCONT).
    public func resume() {
        if !process.hasExited { kill(process.pid, SIGCONT) }
    }

    /// Ends it (SIGCONT, then SIGTERM) and waits until its name is gone.
    public func stop() async throws {
        resume()
        process.terminate()
        try await bus.waitForNoOwner(of: name)
    }
}
