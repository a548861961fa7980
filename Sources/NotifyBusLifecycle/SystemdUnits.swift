package import DBus
package import Logging

/// The systemd user manager on a session bus (`org.freedesktop.systemd1` at
/// `/org/freedesktop/systemd1`, interface `org.freedesktop.systemd1.Manager`): whether it
/// knows a unit, and freezing and thawing a unit through it (`FreezeUnit`, `ThawUnit`: systemd
/// writes the unit's `cgroup.freeze` and keeps its own idea of the unit's state right). A caller
/// freezes through it the units it knows, and writes `cgroup.freeze` itself for the others.
///
/// Every call is asynchronous (bounded by `timeout`). The manager's owner is followed
/// (`DBusConnection.nameOwners(of:handler:)`) and called by its unique name; while no owner is
/// known, the bus daemon is asked first (`GetNameOwner`), so a missing manager is never
/// activated and answers at once.
///
/// Loop-confined like its connection: create it, use it and stop it on the connection's loop
/// thread; every reply runs there.
package final class SystemdUnits {
    /// What the manager says of a unit.
    package enum Lookup: Sendable, Hashable {
        /// It knows the unit: its object.
        case known(ObjectPath)
        /// It does not know the unit (`org.freedesktop.systemd1.NoSuchUnit`), or there is no
        /// manager on the bus.
        case unknown
        /// The question failed otherwise: a timeout, the bus gone, an answer of a wrong type.
        case failed(DBusError)
    }

    /// The manager's name.
    package static let service: BusName = "org.freedesktop.systemd1"
    /// The manager's object.
    package static let objectPath: ObjectPath = "/org/freedesktop/systemd1"
    /// The manager's interface.
    package static let managerInterface: InterfaceName = "org.freedesktop.systemd1.Manager"
    /// The error of `GetUnit` for a unit the manager does not know.
    package static let noSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"

    /// The connection it calls the manager on.
    package let connection: DBusConnection
    private let logger: Logger
    private let timeout: Duration
    /// The manager's unique name, when known; `.some(nil)` when it is known to have none.
    private var owner: BusName?? = nil
    private let handlers: DBusHandlerSet
    private var stopped = false

    /// Follows the manager on `connection`; `timeout` bounds each call.
    package init(connection: DBusConnection, logger: Logger, timeout: Duration = .seconds(10)) {
        self.connection = connection
        handlers = DBusHandlerSet(connection: connection)
        self.logger = logger
        self.timeout = timeout
        handlers.add(connection.nameOwners(of: Self.service) { [weak self] owner in
            guard let self, !self.stopped else { return }
            self.owner = .some(owner)
            self.logger.debug("\(Self.service) is owned by \(owner?.rawValue ?? "nobody")")
        })
        handlers.add(connection.onStateChange { [weak self] state in
            if case .disconnected = state { self?.owner = nil }
        })
    }

    /// Stops following the manager. Replies to calls made before are dropped, and calls made
    /// after get no reply.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        handlers.cancelAll()
    }

    /// Asks the manager whether it knows the unit `name` (`GetUnit`); `reply` gets the answer.
    package func lookUp(unit name: String, reply: @escaping (Lookup) -> Void) {
        callManager("GetUnit", arguments: [.string(name)]) { result in reply(Self.lookup(from: result)) }
    }

    /// Freezes the unit `name` through the manager (`FreezeUnit`); `completion` gets success, or
    /// the error the manager (or the bus) answered, with its name and message.
    package func freeze(unit name: String, completion: @escaping (Result<Void, DBusError>) -> Void) {
        callManager("FreezeUnit", arguments: [.string(name)]) { result in completion(result.map { _ in () }) }
    }

    /// Thaws the unit `name` through the manager (`ThawUnit`); `completion` gets success, or the
    /// error the manager (or the bus) answered, with its name and message.
    package func thaw(unit name: String, completion: @escaping (Result<Void, DBusError>) -> Void) {
        callManager("ThawUnit", arguments: [.string(name)]) { result in completion(result.map { _ in () }) }
    }

    /// Whether a manager owns its name on the bus now, as last seen.
    package var hasManager: Bool {
        if case .some(.some) = owner { return true }
        return false
    }

    /// Moves the running process `pid` into a new scope `name` of the manager's `slice`
    /// (`StartTransientUnit(name, "fail", [PIDs, Slice, CollectMode inactive-or-failed], [])`);
    /// `completion` gets the job's object once the manager queued it (the process may reach the
    /// scope's cgroup a moment after), or the error.
    package func startScope(
        _ name: String, pid: UInt32, slice: String = "app.slice", completion: @escaping (Result<Void, DBusError>) -> Void
    ) {
        let properties: [DBusValue] = [
            .structure([.string("PIDs"), .variant(.array(elementSignature: "u", [.uint32(pid)]))]),
            .structure([.string("Slice"), .variant(.string(slice))]),
            .structure([.string("CollectMode"), .variant(.string("inactive-or-failed"))]),
        ]
        callManager(
            "StartTransientUnit",
            arguments: [.string(name), .string("fail"), .array(elementSignature: "(sv)", properties), .array(elementSignature: "(sa(sv))", [])]
        ) { result in completion(result.map { _ in () }) }
    }

    /// The lookup that `GetUnit`'s `result` means: an object path is known; `NoSuchUnit`, or no
    /// owner of the manager's name, is unknown; anything else failed.
    static func lookup(from result: Result<[DBusValue], DBusError>) -> Lookup {
        switch result {
        case .success(let values):
            guard values.count == 1, case .objectPath(let text) = values[0], let path = ObjectPath(rawValue: text) else {
                return .failed(DBusError(
                    name: DBusError.Name.invalidArgs,
                    message: "GetUnit returned '\(values.map(\.signature).joined())', expected 'o'"))
            }
            return .known(path)
        case .failure(let error):
            return meansUnknown(error) ? .unknown : .failed(error)
        }
    }

    /// Whether `error` says the unit, or the manager, is not there.
    static func meansUnknown(_ error: DBusError) -> Bool {
        [noSuchUnit, DBusError.Name.nameHasNoOwner, DBusError.Name.serviceUnknown].contains(error.name)
    }

    /// Calls `member(arguments)` on the manager's owner: the one known, else the one the bus
    /// daemon names now (`NameHasNoOwner` when none).
    private func callManager(
        _ member: MemberName, arguments: [DBusValue], completion: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        guard !stopped else { return }
        if case .some(.some(let owner)) = owner {
            call(member, arguments: arguments, on: owner, completion: completion)
            return
        }
        connection.call(
            destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner",
            arguments: [.string(Self.service.rawValue)], timeout: timeout
        ) { [weak self] result in
            guard let self, !self.stopped else { return }
            switch result {
            case .success(let values):
                guard let text = values.first?.stringValue, let owner = BusName(rawValue: text) else {
                    completion(.failure(DBusError(
                        name: DBusError.Name.invalidArgs, message: "GetNameOwner returned \(values), expected a bus name")))
                    return
                }
                self.call(member, arguments: arguments, on: owner, completion: completion)
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    private func call(
        _ member: MemberName, arguments: [DBusValue], on owner: BusName,
        completion: @escaping (Result<[DBusValue], DBusError>) -> Void
    ) {
        connection.call(
            destination: owner, path: Self.objectPath, interface: Self.managerInterface, member: member,
            arguments: arguments, timeout: timeout
        ) { [weak self] result in
            guard let self, !self.stopped else { return }
            if case .failure(let error) = result, !Self.meansUnknown(error) {
                self.logger.debug("\(member)(\(arguments.first?.stringValue ?? "")) failed: \(error)")
            }
            completion(result)
        }
    }
}
