/// Which signals a handler receives (`DBusConnection.signals(matching:handler:)`,
/// `DBusClient.signals(matching:)`).
///
/// Every field that is set must match; `nil` matches anything. The rule is sent to the bus
/// (`AddMatch`) so that broadcast signals are routed to us, and is also checked here against
/// every signal that arrives, so unicast signals (sent to our unique name, which need no match
/// rule) are dispatched by the same rules.
///
/// A `sender` that is a well-known name (`net.hadess.SensorProxy`) matches signals from the
/// name's current owner: signals carry the unique name (`:1.42`), so the connection tracks the
/// owner (`NameOwnerChanged`) for you, across restarts of the service.
public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
    /// The sender: a well-known name, a unique name, or `nil` for any.
    public var sender: BusName?
    /// The object path.
    public var path: ObjectPath?
    /// The interface.
    public var interface: InterfaceName?
    /// The signal name.
    public var member: MemberName?
    /// Arguments by index (0 to 63), each of which must be a string (or object path) equal
    /// to the text given (the bus's `argN='…'`; an empty text matches an empty string).
    public var arguments: [Int: String]

    /// The first argument, which must be a string (or object path) equal to this: `arguments[0]`.
    public var arg0: String? {
        get { arguments[0] }
        set { arguments[0] = newValue }
    }

    /// Creates a rule for signals.
    public init(
        sender: BusName? = nil, path: ObjectPath? = nil, interface: InterfaceName? = nil, member: MemberName? = nil,
        arg0: String? = nil, arguments: [Int: String] = [:]
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        if let arg0 { self.arguments[0] = arg0 }
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` from `sender` on `path`, for
    /// properties of `interface` (its `arg0`).
    public static func propertiesChanged(sender: BusName?, path: ObjectPath, interface: InterfaceName?) -> DBusMatchRule {
        DBusMatchRule(
            sender: sender, path: path, interface: .properties, member: "PropertiesChanged", arg0: interface?.rawValue)
    }

    /// The rule in the bus's syntax: `type='signal',sender='…',…`.
    public var text: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Inside quotes only the apostrophe is special; it is written as '\''.
            parts.append("\(key)='" + value.replacingAll("'", with: "'\\''") + "'")
        }
        add("sender", sender?.rawValue)
        add("path", path?.rawValue)
        add("interface", interface?.rawValue)
        add("member", member?.rawValue)
        for index in arguments.keys.sorted() { add("arg\(index)", arguments[index]) }
        return parts.joined(separator: ",")
    }

    /// The rule in the bus's syntax (`text`).
    public var description: String { text }

    /// Whether `sender` names a well-known name whose owner must be tracked.
    var wellKnownSender: BusName? {
        guard let sender, !sender.isUnique, sender != .bus else { return nil }
        return sender
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
