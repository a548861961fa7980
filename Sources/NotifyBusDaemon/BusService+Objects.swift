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
                    results: [.init("subscription", "o")], precheck: Self.patternCount(of: "Subscribe")
                ) { [weak self] call in self?.later(call, BusService.subscribe) },
                DBusMethod("GetValue", arguments: [.init("key", "s")], results: [.init("value", "s")]) {
                    [weak self] call in self?.getValue(call)
                },
                DBusMethod(
                    "Snapshot", arguments: [.init("patterns", "as")], results: [.init("values", "a(ss)")],
                    precheck: Self.patternCount(of: "Snapshot")
                ) { [weak self] call in self?.later(call, BusService.snapshot) },
            ],
            properties: [
                DBusProperty("Sources", "a(sss)", emitsChange: true) { [weak self] in
                    .array(
                        elementSignature: "(sss)",
                        (self?.sources ?? []).map { .structure([.string($0.name), .string($0.status), .string($0.reason)]) })
                },
                DBusProperty("Version", "u") { .uint32(BusInterface.version) },
            ])
        return DBusObject(path: BusInterface.path, interfaces: [interface] + interfaces)
    }

    /// Refuses more patterns than a call takes before any of them is decoded.
    private static func patternCount(of member: String) -> (DBusArgumentPreview) -> DBusError? {
        { preview in
            guard let count = preview.elementCount(ofArgument: 0), count > BusInterface.Limits.patternsPerSubscription
            else { return nil }
            return SubscribeRequest.Refusal.limitsExceeded(
                "\(count) patterns: \(member) takes at most \(BusInterface.Limits.patternsPerSubscription)"
            ).error
        }
    }

    /// The subscription objects, `/org/notifybus/Bus1/subscription/<n>`, one subtree: an object
    /// for each live subscription, its owner's alone (but `Introspect` and `Peer`).
    func subscriptionSubtree() -> DBusSubtree {
        /// The method `name`, carrying out what `act` does for the subscription at the call's path.
        func method(_ name: MemberName, _ act: @escaping (BusService, UInt64) -> Void) -> DBusMethod {
            DBusMethod(name) { [weak self] call in
                guard let self, let number = BusInterface.subscriptionNumber(of: call.path) else { return }
                act(self, number)
                call.reply()
            }
        }
        let interface = DBusInterface(
            name: BusInterface.subscriptionInterface,
            methods: [
                method("Suspend") { $0.perform($0.table.suspend($1)) },
                method("Resume") { $0.perform($0.table.resume($1)) },
                method("Cancel") { $0.perform($0.table.cancel($1)) },
                method("Resync") { $0.live[$1]?.subscription.resync() },
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

    /// `Subscribe`, in its turn in the backlog.
    private func subscribe(_ call: DBusMethodCall) {
        let request: SubscribeRequest
        do {
            request = try SubscribeRequest(arguments: call.arguments)
        } catch {
            call.fail(error.error)
            return
        }
        perform(table.subscribe(owner: call.sender, call: keep(call), request: request))
    }

    private func getValue(_ call: DBusMethodCall) {
        let key = call.arguments.first?.stringValue ?? ""
        guard let value = bus.value(forKey: key) else {
            call.fail(DBusError(name: BusInterface.ErrorName.unknownKey, message: "no value for '\(key)'"))
            return
        }
        call.reply([.string(value.jsonText)])
    }

    /// `Snapshot`, in its turn in the backlog.
    private func snapshot(_ call: DBusMethodCall) {
        let patterns: [KeyPattern]
        do {
            patterns = try SubscribeRequest.patterns(call.arguments.first?.arrayElements ?? [], of: "Snapshot")
        } catch {
            call.fail(error.error)
            return
        }
        // Room for the reply's header; each pair takes its two strings' lengths, their NULs and
        // at most 7 bytes of padding.
        var size = 512
        var values: [DBusValue] = []
        for (key, value) in bus.snapshot(matching: patterns) {
            let text = value.jsonText
            size += 4 + key.utf8.count + 1 + 3 + 4 + text.utf8.count + 1 + 7
            guard size <= BusInterface.Limits.signalBytes else {
                call.fail(SubscribeRequest.Refusal.limitsExceeded(
                    "the values matching these patterns pass \(BusInterface.Limits.signalBytes) bytes: ask with narrower patterns"
                ).error)
                return
            }
            values.append(.structure([.string(key), .string(text)]))
        }
        call.reply([.array(elementSignature: "(ss)", values)])
    }
}
