/// One interface of an exported object, described once: its methods, properties and signals.
///
/// Dispatch, the check of each call's argument signature, the `Introspect` XML and the
/// `org.freedesktop.DBus.Properties` methods all follow from this description
/// (`DBusConnection.export(_:)`), as sd-bus's object vtables and zbus's interfaces do.
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
public struct DBusMethod {
    /// The method's name.
    public var name: MemberName
    /// What it takes; a call whose signature differs is refused with `InvalidArgs` before the
    /// handler runs.
    public var arguments: [DBusArgument]
    /// What it returns; the handler replies with values of exactly these types.
    public var results: [DBusArgument]
    /// Answers a call, on the loop thread: with `DBusMethodCall.reply(_:)` or
    /// `DBusMethodCall.fail(_:)`, at once or later.
    public var handler: (DBusMethodCall) -> Void

    /// Describes a method.
    public init(
        _ name: MemberName, arguments: [DBusArgument] = [], results: [DBusArgument] = [],
        handler: @escaping (DBusMethodCall) -> Void
    ) {
        self.name = name
        self.arguments = arguments
        self.results = results
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
    /// Reads its current value, on the loop thread; the value must have type `signature`.
    public var value: () -> DBusValue

    /// Describes a property.
    public init(_ name: String, _ signature: String, emitsChange: Bool = false, value: @escaping () -> DBusValue) {
        self.name = name
        self.signature = signature
        self.emitsChange = emitsChange
        self.value = value
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
