import DBus
import Testing

/// A call's body that records what dispatch read of it: its size, its element counts, its
/// arguments.
final class RecordingBody: DBusCallBody {
    let message: DBusMessage
    private(set) var sizeReads = 0
    private(set) var countReads = 0
    private(set) var decodes = 0

    init(_ message: DBusMessage) {
        self.message = message
    }

    var bodySize: Int {
        sizeReads += 1
        return message.bodySize
    }

    func elementCount(ofArgument index: Int) -> Int? {
        countReads += 1
        return message.elementCount(ofArgument: index)
    }

    func arguments(within budget: DBusDecodingBudget, limitsExceeded: ErrorName) throws(DBusError) -> [DBusValue] {
        decodes += 1
        return try message.arguments(within: budget, limitsExceeded: limitsExceeded)
    }

    /// Whether anything of the body was looked at.
    var wasRead: Bool { sizeReads + countReads + decodes > 0 }
}

/// A decision in a form tests compare.
enum Outcome: Equatable, CustomStringConvertible {
    case notHandled
    case error(String)
    case reply([DBusValue])
    case invoke(MemberName, [DBusValue])

    init(_ decision: DBusDispatcher.Decision) {
        switch decision {
        case .notHandled: self = .notHandled
        case .error(let error): self = .error(error.name)
        case .reply(let values): self = .reply(values)
        case .invoke(let method, _, let arguments): self = .invoke(method.name, arguments)
        }
    }

    var errorName: String? {
        if case .error(let name) = self { return name }
        return nil
    }

    var description: String {
        switch self {
        case .notHandled: "not handled"
        case .error(let name): "error \(name)"
        case .reply(let values): "reply \(values)"
        case .invoke(let member, let arguments): "invoke \(member)\(arguments)"
        }
    }
}

let exampleCalc: InterfaceName = "org.example.Calc1"
let exampleThing: InterfaceName = "org.example.Thing1"

/// Tables like a service's: `/calc` open to all, `/private` only for `:1.1`, and a subtree
/// `/things` whose objects `/things/1` (owned by `:1.1`) and `/things/2` (owned by `:1.2`)
/// exist, each its owner's alone.
func makeDispatcher(limits: DBusDispatcher.Limits = .init()) throws -> DBusDispatcher {
    let unused: (DBusMethodCall) -> Void = { _ in }
    let calc = DBusInterface(
        name: exampleCalc,
        methods: [
            DBusMethod("Add", arguments: [.init("a", "i"), .init("b", "i")], results: [.init("sum", "i")], handler: unused),
            DBusMethod("Count", arguments: [.init("bytes", "ay")], results: [.init("n", "u")], handler: unused),
            DBusMethod(
                "Subscribe", arguments: [.init("patterns", "as"), .init("options", "a{sv}")],
                results: [.init("subscription", "o")],
                budget: DBusDecodingBudget(values: 40, depth: 4, stringBytes: 200),
                precheck: { preview in
                    (preview.elementCount(ofArgument: 0) ?? 0) > 8
                        ? DBusError(name: "org.example.Error.TooMany", message: "more than 8 patterns") : nil
                },
                handler: unused),
        ],
        properties: [DBusProperty("Version", "u") { .uint32(2) }, DBusProperty("Name", "s") { .string("calc") }])
    let thing = DBusInterface(
        name: exampleThing,
        methods: [DBusMethod("Poke", handler: unused), DBusMethod("Rename", arguments: [.init("name", "s")], handler: unused)],
        properties: [DBusProperty("Where", "s") { path in .string(path.rawValue) }])
    let owners: [ObjectPath: BusName] = ["/things/1": ":1.1", "/things/2": ":1.2"]
    var dispatcher = DBusDispatcher(limits: limits)
    try dispatcher.add(DBusObject(path: "/calc", interfaces: [calc]))
    try dispatcher.add(DBusObject(path: "/private", interfaces: [calc]) { header in
        header.sender == ":1.1" ? nil : DBusError(name: DBusError.Name.accessDenied, message: "not yours")
    })
    try dispatcher.add(DBusSubtree(
        prefix: "/things", interfaces: [thing], resolve: { owners[$0] != nil }, enumerate: { Array(owners.keys) },
        authorize: { header in
            owners[header.path] == header.sender ? nil : DBusError(name: DBusError.Name.accessDenied, message: "not yours")
        }))
    return dispatcher
}

/// A method call from `sender` and its header, as the bus would deliver it.
func makeCall(
    _ sender: BusName, _ path: ObjectPath, _ interface: InterfaceName?, _ member: MemberName, _ arguments: [DBusValue] = []
) throws -> (header: DBusCallHeader, body: RecordingBody) {
    let message = try DBusMessage.methodCall(
        destination: nil, path: path, interface: interface, member: member, arguments: arguments)
    var header = try #require(message.callHeader)
    header.sender = sender
    return (header, RecordingBody(message))
}

extension DBusDispatcher {
    /// The outcome of a call from `sender`, and what of its body was read.
    func outcome(
        _ sender: BusName, _ path: ObjectPath, _ interface: InterfaceName?, _ member: MemberName,
        _ arguments: [DBusValue] = []
    ) throws -> (outcome: Outcome, body: RecordingBody) {
        let (header, body) = try makeCall(sender, path, interface, member, arguments)
        return (Outcome(decide(header, body: body)), body)
    }
}

/// The length of `message`'s body as its wire form says (bytes 4 to 7 of the header, in the
/// message's byte order).
func wireBodyLength(_ message: DBusMessage) throws -> Int {
    let wire = try message.marshal()
    let field = wire[4..<8].map(UInt32.init)
    let value = wire[0] == UInt8(ascii: "l")
        ? field[0] | field[1] << 8 | field[2] << 16 | field[3] << 24
        : field[3] | field[2] << 8 | field[1] << 16 | field[0] << 24
    return Int(value)
}
