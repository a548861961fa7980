public import DBus
import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

// The manager's units: systemctl, app scopes started as launchers start them, and the manager's
// D-Bus interface.
extension SystemdUserManager {
    /// The manager's name on its bus.
    public static let busName: BusName = "org.freedesktop.systemd1"
    /// The manager's object.
    public static let objectPath: ObjectPath = "/org/freedesktop/systemd1"
    /// The manager's interface.
    public static let managerInterface: InterfaceName = "org.freedesktop.systemd1.Manager"
    /// Every unit object's interface.
    public static let unitInterface: InterfaceName = "org.freedesktop.systemd1.Unit"

    // MARK: systemctl

    /// `systemctl --user ARGUMENTS` (outside the namespace); its output.
    /// - Throws: `HarnessError` when it exits with another status than 0.
    @discardableResult
    public func systemctl(_ arguments: [String]) async throws -> String {
        try await runCommand("/usr/bin/systemctl", ["--user"] + arguments, environment: commandEnvironment)
    }

    /// What `systemctl --user is-system-running` says inside the namespace (`running` once the
    /// manager is up; empty when it cannot be asked).
    public func systemState() async -> String {
        let pid = self.pid
        guard pid > 0, let result = try? await runCommandToEnd(
            "/usr/bin/nsenter", ["--target", "\(pid)", "--mount", "/usr/bin/systemctl", "--user", "is-system-running"],
            environment: commandEnvironment)
        else { return "" }
        return Self.firstLine(result.output)
    }

    /// A property of `unit` as `systemctl --user show --property=NAME --value` prints it.
    public func property(_ name: String, of unit: String) async throws -> String {
        Self.firstLine(try await systemctl(["show", "--property=\(name)", "--value", unit]))
    }

    /// The `FreezerState` of `unit`, from `systemctl --user show`.
    /// - Throws: `HarnessError` for a value that is not a freezer state.
    public func freezerState(of unit: String) async throws -> FreezerState {
        let value = try await property("FreezerState", of: unit)
        guard let state = FreezerState(rawValue: value) else { throw HarnessError("FreezerState of \(unit) is '\(value)'") }
        return state
    }

    /// The first line of `text`, without the white space around it.
    static func firstLine(_ text: String) -> String {
        let line = text.split(separator: "\n").first ?? ""
        return String(line.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    // MARK: App scopes

    /// The scope `unit` in the manager's `app.slice` (which systemd makes when it starts it).
    public func scope(named unit: String) -> AppScopes.Scope {
        AppScopes.Scope(name: unit, group: appSlice + "/" + unit, directory: appSliceDirectory + "/" + unit)
    }

    /// Runs `command` (a path and its arguments) in a new app scope as launchers do:
    /// `systemd-run --user --scope --unit=app-test-<appID>-<N>.scope` (N counts from 1 per
    /// manager), outside the namespace, with exactly `environment` (`env -i`), as `user` when
    /// one is given (`setpriv`). Returns once the command runs in the scope (systemd-run moves
    /// itself there, waits for the job, then execs the command: its PID is the command's).
    /// - Throws: `HarnessError` when systemd-run fails (its output) or the command does not show
    ///   in the scope within `timeout`.
    public func startInScope(
        appID: String, command: [String], environment: [String: String] = ["PATH": "/usr/bin:/bin"], user: User? = nil,
        timeout: Duration = patience
    ) async throws -> ScopedProcess {
        guard let executable = command.first else { throw HarnessError("no command to start") }
        guard let number = state.withLock({ state -> Int? in
            guard !state.stopped else { return nil }
            defer { state.nextScope += 1 }
            return state.nextScope
        }) else { throw HarnessError("the manager is stopped") }
        let unit = "app-test-\(appID)-\(number).scope"
        let scope = self.scope(named: unit)
        let asUser = user.map { ["/usr/bin/setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--clear-groups"] } ?? []
        let output = runtimeDirectory + "/\(unit).log"
        let process = try ChildProcess(
            "/usr/bin/systemd-run",
            ["--user", "--scope", "--quiet", "--unit=\(unit)", "--", "/usr/bin/env", "-i"]
                + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + asUser + command,
            environment: commandEnvironment, log: output)
        state.withLock { $0.launched.append(process) }
        let started = await eventually(timeout: timeout) {
            process.hasExited
                || (Self.group(ofProcess: process.pid) == scope.group && Self.arguments(of: process.pid).first == executable)
        }
        guard started, !process.hasExited else {
            process.terminate(signal: SIGKILL)
            throw HarnessError("systemd-run did not start \(executable) in \(unit): \(readFile(output) ?? "")")
        }
        return ScopedProcess(unit: unit, scope: scope, process: process)
    }

    // MARK: D-Bus

    /// A new connection to the manager's bus, connected (the caller closes it).
    public func connect() async throws -> DBusClient {
        let client = try DBusClient(address: dbusAddress)
        do {
            try await client.waitUntilConnected()
        } catch {
            await client.close()
            throw error
        }
        return client
    }

    /// Calls `member` on `org.freedesktop.systemd1.Manager` over the harness's own connection.
    @discardableResult
    public func callManager(_ member: MemberName, _ arguments: [DBusValue] = [], timeout: Duration = patience) async throws
        -> [DBusValue]
    {
        guard let client = state.withLock({ $0.client }) else { throw HarnessError("the manager is stopped") }
        return try await client.call(
            destination: Self.busName, path: Self.objectPath, interface: Self.managerInterface, member: member,
            arguments: arguments, timeout: timeout)
    }

    /// `FreezeUnit(unit)` over D-Bus; it returns once the unit's group is frozen.
    public func freezeUnit(_ unit: String) async throws { try await callManager("FreezeUnit", [.string(unit)]) }

    /// `ThawUnit(unit)` over D-Bus.
    public func thawUnit(_ unit: String) async throws { try await callManager("ThawUnit", [.string(unit)]) }

    /// `GetUnit(unit)`: the unit's object (`NoSuchUnit` for a unit the manager does not have loaded).
    public func unitObject(_ unit: String) async throws -> ObjectPath {
        let reply = try await callManager("GetUnit", [.string(unit)])
        guard case .objectPath(let text)? = reply.first, let path = ObjectPath(rawValue: text) else {
            throw HarnessError("GetUnit(\(unit)) returned \(reply)")
        }
        return path
    }

    /// The unit's `FreezerState` property over D-Bus.
    public func unitFreezerState(_ unit: String) async throws -> FreezerState {
        guard let client = state.withLock({ $0.client }) else { throw HarnessError("the manager is stopped") }
        let object = try await unitObject(unit)
        let value = try await client.property(
            destination: Self.busName, path: object, interface: Self.unitInterface, name: "FreezerState")
        guard let text = value.stringValue, let state = FreezerState(rawValue: text) else {
            throw HarnessError("FreezerState of \(unit) is \(value)")
        }
        return state
    }

    /// `StartTransientUnit`'s arguments (signature `ssa(sv)a(sa(sv))`) for a scope `unit` that takes
    /// the running processes `pids`: mode `fail`, properties `PIDs` (`au`), `Slice` and
    /// `CollectMode` (`inactive-or-failed`: collected as soon as it ends, also when it failed),
    /// no auxiliary units.
    public static func transientScopeArguments(_ unit: String, pids: [pid_t], slice: String = "app.slice") -> [DBusValue] {
        [
            .string(unit), .string("fail"),
            .array(elementSignature: "(sv)", [
                .structure([.string("PIDs"), .variant(.array(elementSignature: "u", pids.map { .uint32(UInt32(bitPattern: $0)) }))]),
                .structure([.string("Slice"), .variant(.string(slice))]),
                .structure([.string("CollectMode"), .variant(.string("inactive-or-failed"))]),
            ]),
            .array(elementSignature: "(sa(sv))", []),
        ]
    }

    /// Moves the running processes `pids` into a new scope `unit` in `app.slice`
    /// (`StartTransientUnit`); returns the start job's object. The reply comes when the job is
    /// queued: the processes are in the scope's group once the job is done (`JobRemoved`).
    public func startTransientScope(_ unit: String, pids: [pid_t]) async throws -> ObjectPath {
        let reply = try await callManager("StartTransientUnit", Self.transientScopeArguments(unit, pids: pids))
        guard case .objectPath(let text)? = reply.first, let job = ObjectPath(rawValue: text) else {
            throw HarnessError("StartTransientUnit(\(unit)) returned \(reply)")
        }
        return job
    }
}
