import DBus
import NotifyBus
import NotifyBusProtocol

extension BusService {
    /// `/org/notifybus/Bus1`: open to every connection.
    func busObject() -> DBusObject {
        let interface = DBusInterface(
            name: BusInterface.interface,
            methods: [
                DBusMethod(
                    "Subscribe", arguments: [.init("patterns", "as"), .init("options", "a{sv}")],
                    results: [.init("subscription", "o")]
                ) { [weak self] call in self?.subscribe(call) },
                DBusMethod("GetValue", arguments: [.init("key", "s")], results: [.init("value", "s")]) {
                    [weak self] call in self?.getValue(call)
                },
                DBusMethod("Snapshot", arguments: [.init("patterns", "as")], results: [.init("values", "a(ss)")]) {
                    [weak self] call in self?.snapshot(call)
                },
            ],
            properties: [
                DBusProperty("Sources", "a(sss)", emitsChange: true) { [weak self] in
                    .array(
                        elementSignature: "(sss)",
                        (self?.sources ?? []).map { .structure([.string($0.name), .string($0.status), .string($0.reason)]) })
                },
                DBusProperty("Version", "u") { .uint32(BusInterface.version) },
            ])
        return DBusObject(path: BusInterface.path, interfaces: [interface])
    }

    /// The subscription objects, `/org/notifybus/Bus1/subscription/<n>`, one subtree: an object
    /// for each live subscription, its owner's alone (but `Introspect` and `Peer`).
    func subscriptionSubtree() -> DBusSubtree {
        /// The method `name`, carrying out what `act` decides for the subscription at the call's path.
        func method(_ name: MemberName, _ act: @escaping (inout SubscriptionTable, UInt64) -> [SubscriptionTable.Action]) -> DBusMethod {
            DBusMethod(name) { [weak self] call in
                guard let self, let number = BusInterface.subscriptionNumber(of: call.path) else { return }
                self.perform(act(&self.table, number))
                call.reply()
            }
        }
        let interface = DBusInterface(
            name: BusInterface.subscriptionInterface,
            methods: [
                method("Suspend") { $0.suspend($1) },
                method("Resume") { $0.resume($1) },
                method("Cancel") { $0.cancel($1) },
            ],
            properties: [
                DBusProperty("State", "s") { [weak self] path in
                    let number = BusInterface.subscriptionNumber(of: path)
                    return .string(number.flatMap { self?.table.entries[$0] }?.isSuspended == true ? "suspended" : "active")
                },
            ],
            signals: [DBusSignalMember(BusInterface.eventsSignal, arguments: [.init("events", "aa{sv}")])])
        return DBusSubtree(
            prefix: BusInterface.subscriptionPrefix, interfaces: [interface],
            resolve: { [weak self] path in
                BusInterface.subscriptionNumber(of: path).map { self?.live[$0] != nil } ?? false
            },
            enumerate: { [weak self] in (self?.live.keys.sorted() ?? []).map(BusInterface.subscriptionPath) },
            authorize: { [weak self] header in
                guard let number = BusInterface.subscriptionNumber(of: header.path),
                      let owner = self?.table.entries[number]?.owner, owner == header.sender
                else {
                    return DBusError(
                        name: DBusError.Name.accessDenied, message: "\(header.path) belongs to another connection")
                }
                return nil
            })
    }

    // MARK: Methods of the bus object

    private func subscribe(_ call: DBusMethodCall) {
        let request: SubscribeRequest
        do {
            request = try SubscribeRequest(arguments: call.arguments)
        } catch {
            call.fail(error.error)
            return
        }
        guard let (number, actions) = table.subscribe(owner: call.sender, followsLife: request.followsFreezer) else {
            call.fail(DBusError(
                name: BusInterface.ErrorName.limitsExceeded,
                message: "a connection may hold at most \(table.perOwnerLimit) subscriptions"))
            return
        }
        perform(actions, request: request)
        // The reply leaves now; the subscription's first events (its initial values) are queued
        // on the loop behind it.
        call.reply([.objectPath(BusInterface.subscriptionPath(number).rawValue)])
    }

    private func getValue(_ call: DBusMethodCall) {
        let key = call.arguments.first?.stringValue ?? ""
        guard let value = bus.value(forKey: key) else {
            call.fail(DBusError(name: BusInterface.ErrorName.unknownKey, message: "no value for '\(key)'"))
            return
        }
        call.reply([.string(value.jsonText)])
    }

    private func snapshot(_ call: DBusMethodCall) {
        let texts = call.arguments.first?.stringArray ?? []
        let patterns = texts.isEmpty ? [KeyPattern.all] : texts.map { KeyPattern($0) }
        let values = bus.snapshot(matching: patterns).map { DBusValue.structure([.string($0.key), .string($0.value.jsonText)]) }
        call.reply([.array(elementSignature: "(ss)", values)])
    }
}
