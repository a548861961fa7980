import DBus

/// A service's tables like notifybusd's, built for each input: the bus object (open to every
/// caller: `Subscribe(as, a{sv}) → o`, `GetValue(s) → s`, `Snapshot(as) → a(ss)`, properties
/// `Sources` and `Version`) and the subscription subtree, whose objects 1 (owned by `:1.7`)
/// and 2 (owned by `:1.8`) exist, each its owner's alone (`Suspend`, `Resume`, `Cancel`,
/// `Resync`, property `State`). Every handler checks what it is handed, and `calls` counts them.
final class DispatchTables {
    static let busPath: ObjectPath = "/org/notifybus/Bus1"
    static let busInterface: InterfaceName = "org.notifybus.Bus1"
    static let prefix: ObjectPath = "/org/notifybus/Bus1/subscription"
    static let subscriptionInterface: InterfaceName = "org.notifybus.Subscription1"
    static let owners: [UInt64: BusName] = [1: ":1.7", 2: ":1.8"]
    static let limits = DBusDispatcher.Limits(maximumBodySize: 4096, limitsExceeded: "org.notifybus.Error.LimitsExceeded")

    private(set) var dispatcher = DBusDispatcher(limits: limits)
    /// Handlers run, by member.
    private(set) var calls: [String] = []

    init() {
        let bus = DBusInterface(
            name: Self.busInterface,
            methods: [
                method("Subscribe", ["as", "a{sv}"], ["o"], precheck: Self.atMost64Patterns) { call in
                    call.reply([.objectPath(Self.prefix.rawValue + "/3")])
                },
                method("GetValue", ["s"], ["s"]) { call in call.reply([.string("null")]) },
                method("Snapshot", ["as"], ["a(ss)"], precheck: Self.atMost64Patterns) { call in
                    let patterns = call.arguments[0].stringArray ?? []
                    call.reply([.array(elementSignature: "(ss)", patterns.map { .structure([.string($0), .string("1")]) })])
                },
            ],
            properties: [
                DBusProperty("Sources", "a(sss)") { .array(elementSignature: "(sss)", []) },
                DBusProperty("Version", "u") { .uint32(2) },
            ])
        let subscription = DBusInterface(
            name: Self.subscriptionInterface,
            methods: ["Suspend", "Resume", "Cancel", "Resync"].map { name in
                method(MemberName(rawValue: name)!, [], []) { [unowned self] call in
                    // Only the owner of the object at the call's path gets here.
                    guard let number = Self.number(of: call.path), Self.owners[number] == call.sender else {
                        violated("\(call.sender) reached \(call.member) of \(call.path)")
                    }
                    self.calls.append("\(name) \(number)")
                    call.reply()
                }
            },
            properties: [DBusProperty("State", "s") { path in .string(Self.number(of: path) == 1 ? "active" : "suspended") }])
        try? dispatcher.add(DBusObject(path: Self.busPath, interfaces: [bus]))
        try? dispatcher.add(DBusSubtree(
            prefix: Self.prefix, interfaces: [subscription],
            resolve: { Self.number(of: $0).map { Self.owners[$0] != nil } ?? false },
            enumerate: { Self.owners.keys.sorted().map { ObjectPath(rawValue: Self.prefix.rawValue + "/\($0)")! } },
            authorize: { header in
                Self.number(of: header.path).flatMap { Self.owners[$0] } == header.sender
                    ? nil : DBusError(name: DBusError.Name.accessDenied, message: "not yours")
            }))
    }

    /// A method that checks it is handed arguments of its signature before `body` answers.
    private func method(
        _ name: MemberName, _ arguments: [String], _ results: [String],
        precheck: ((DBusArgumentPreview) -> DBusError?)? = nil, body: @escaping (DBusMethodCall) -> Void
    ) -> DBusMethod {
        let signature = arguments.joined()
        return DBusMethod(
            name, arguments: arguments.map { DBusArgument("a", $0) }, results: results.map { DBusArgument("r", $0) },
            precheck: precheck
        ) { [unowned self] call in
            let spelled = call.arguments.map(\.signature).joined()
            guard spelled == signature, call.signature == signature else {
                violated("\(name) of '\(signature)' was handed '\(spelled)' (header '\(call.signature)')")
            }
            self.calls.append(name.rawValue)
            body(call)
        }
    }

    private static func atMost64Patterns(_ preview: DBusArgumentPreview) -> DBusError? {
        (preview.elementCount(ofArgument: 0) ?? 0) > 64
            ? DBusError(name: "org.notifybus.Error.LimitsExceeded", message: "more than 64 patterns") : nil
    }

    /// The subscription number of `path`, when it is `<prefix>/<n>` with `n` in decimal.
    static func number(of path: ObjectPath) -> UInt64? {
        let text = path.rawValue
        let start = prefix.rawValue + "/"
        guard text.hasPrefix(start), let number = UInt64(text.dropFirst(start.count)),
              text.utf8.count == start.utf8.count + String(number).utf8.count
        else { return nil }
        return number
    }

    /// What a call to `path` reaches, by the tables' own rules.
    enum Target: Equatable {
        case bus
        case subscription(owner: BusName)
        /// A node on the way to objects (introspectable, nothing else).
        case node
        case nothing
    }

    static func target(of path: ObjectPath) -> Target {
        if path == busPath { return .bus }
        if let number = number(of: path), let owner = owners[number] { return .subscription(owner: owner) }
        if ["/", "/org", "/org/notifybus", prefix.rawValue].contains(path.rawValue) { return .node }
        return .nothing
    }
}
