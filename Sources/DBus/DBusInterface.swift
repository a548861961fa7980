/// One interface of an exported object, described once: its methods, properties and signals.
///
/// Dispatch, the check of each call's argument signature, the `Introspect` XML and the
/// `org.freedesktop.DBus.Properties` methods all follow from this description, one table per
/// interface as sd-bus's object vtables: exported at one path (`DBusObject`) or for every
/// object under a prefix (`DBusSubtree`), through `DBusConnection.export(_:)`.
///
/// ```swift
/// let greeter = DBusInterface(
///     name: "org.example.Greeter1",
///     methods: [
///         DBusMethod("Greet", arguments: [.init("name", "s")], results: [.init("greeting", "s")]) { call in
///             call.reply([.string("hello, \(call.arguments[0].stringValue ?? "")")])
///         },
///     ],
///     properties: [DBusProperty("Version", "u") { .uint32(1) }])
/// ```
///
/// Lives on the loop thread of the connection it is exported on, like everything it calls.
public struct DBusInterface {
    /// The interface's name.
    public var name: InterfaceName
    /// Its methods.
    public var methods: [DBusMethod]
    /// Its properties (read-only: `Set` is refused).
    public var properties: [DBusProperty]
    /// Its signals, for introspection.
    public var signals: [DBusSignalMember]

    /// Describes an interface.
    public init(
        name: InterfaceName, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalMember] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    /// The method named `member`, if it has one.
    func method(_ member: String) -> DBusMethod? {
        methods.first { $0.name.rawValue == member }
    }

    /// The property named `name`, if it has one.
    func property(_ name: String) -> DBusProperty? {
        properties.first { $0.name == name }
    }
}

/// One named argument of a method or signal: its name (for introspection) and its single
/// complete type.
public struct DBusArgument: Sendable, Hashable {
    /// The argument's name, as introspection shows it.
    public var name: String
    /// Its type: one complete type (`s`, `as`, `a{sv}`).
    public var signature: String

    /// An argument `name` of type `signature`.
    public init(_ name: String, _ signature: String) {
        self.name = name
        self.signature = signature
    }
}

/// A method of an exported interface and the handler that answers it.
///
/// Dispatch checks a call against it before reading the call's body: the signature must be
/// `argumentSignature` (else `InvalidArgs`), then `precheck` may refuse the call from its
/// element counts, then the arguments are decoded within `budget` and the handler runs.
public struct DBusMethod {
    /// The method's name.
    public var name: MemberName
    /// What it takes; a call whose signature differs is refused with `InvalidArgs` before its
    /// body is read.
    public var arguments: [DBusArgument]
    /// What it returns; the handler replies with values of exactly these types.
    public var results: [DBusArgument]
    /// The most its arguments may decode to (past it the call is refused with the connection's
    /// limits-exceeded error); `nil`: `DBusDecodingBudget(bodyLimit:)` of the connection's body
    /// limit.
    public var budget: DBusDecodingBudget?
    /// Looks at a call whose signature is right before its arguments are decoded: an error
    /// refuses it unread (for instance more elements in an array than the method accepts).
    public var precheck: ((DBusArgumentPreview) -> DBusError?)?
    /// Answers a call, on the loop thread: with `DBusMethodCall.reply(_:)` or
    /// `DBusMethodCall.fail(_:)`, at once or later. `call.path` is the object it was sent to
    /// (for a `DBusSubtree`, the one the resolver found).
    public var handler: (DBusMethodCall) -> Void

    /// Describes a method.
    public init(
        _ name: MemberName, arguments: [DBusArgument] = [], results: [DBusArgument] = [],
        budget: DBusDecodingBudget? = nil, precheck: ((DBusArgumentPreview) -> DBusError?)? = nil,
        handler: @escaping (DBusMethodCall) -> Void
    ) {
        self.name = name
        self.arguments = arguments
        self.results = results
        self.budget = budget
        self.precheck = precheck
        self.handler = handler
    }

    /// The signature a call must have.
    public var argumentSignature: String { arguments.map(\.signature).joined() }
    /// The signature of its reply.
    public var resultSignature: String { results.map(\.signature).joined() }
}

/// A read-only property of an exported interface.
public struct DBusProperty {
    /// The property's name.
    public var name: String
    /// Its type: one complete type.
    public var signature: String
    /// Whether `PropertiesChanged` is emitted when it changes (introspected as the annotation
    /// `org.freedesktop.DBus.Property.EmitsChangedSignal`).
    public var emitsChange: Bool
    /// Reads its current value on the object at the path given, on the loop thread; the value
    /// must have type `signature`.
    public var value: (ObjectPath) -> DBusValue

    /// Describes a property whose value is the same whatever the object's path.
    public init(_ name: String, _ signature: String, emitsChange: Bool = false, value: @escaping () -> DBusValue) {
        self.init(name, signature, emitsChange: emitsChange, valueAt: { _ in value() })
    }

    /// Describes a property whose value depends on the object's path (for a `DBusSubtree`).
    public init(
        _ name: String, _ signature: String, emitsChange: Bool = false, valueAt: @escaping (ObjectPath) -> DBusValue
    ) {
        self.name = name
        self.signature = signature
        self.emitsChange = emitsChange
        self.value = valueAt
    }
}

/// A signal of an exported interface, for introspection (emit it with
/// `DBusConnection.emitSignal(path:interface:member:arguments:destination:)`).
public struct DBusSignalMember: Sendable, Hashable {
    /// The signal's name.
    public var name: MemberName
    /// Its arguments.
    public var arguments: [DBusArgument]

    /// Describes a signal.
    public init(_ name: MemberName, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}
