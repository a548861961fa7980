/// The most a message's arguments may decode to: how many values, how deeply nested, how many
/// bytes of text. `DBusMessage.arguments(within:limitsExceeded:)` stops at the first value past
/// it and throws, having decoded no more than the budget allows.
///
/// A body's bytes do not bound its decoded size: one byte of an `ay` decodes to one
/// `DBusValue` of tens of bytes, an empty array inside an array costs four bytes on the wire.
/// A budget does.
public struct DBusDecodingBudget: Sendable, Hashable {
    /// The most values in all: every basic value, every container (array, dictionary,
    /// dictionary entry, structure, variant) and every element counts one.
    public var values: Int
    /// The deepest nesting: how many containers may enclose a value (`as`: 1; `a{sv}` holding a
    /// string: 3, the array, the entry and the variant).
    public var depth: Int
    /// The most bytes of text in all: strings, object paths and signatures, as UTF-8.
    public var stringBytes: Int

    /// A budget of `values` values, `depth` levels of nesting and `stringBytes` bytes of text.
    public init(values: Int, depth: Int, stringBytes: Int) {
        self.values = values
        self.depth = depth
        self.stringBytes = stringBytes
    }

    /// The budget of a method that declares none, on a connection that accepts bodies of up to
    /// `bodyLimit` bytes: a value for every 8 bytes of the limit (at least 64), 32 levels of
    /// nesting, and text up to the limit. For 128 KiB that is 16,384 values: some 1 MB decoded.
    public init(bodyLimit: Int) {
        self.init(values: max(64, bodyLimit / 8), depth: 32, stringBytes: max(0, bodyLimit))
    }

    /// No limit: what `DBusMessage.arguments()` decodes with.
    public static let unlimited = DBusDecodingBudget(values: .max, depth: .max, stringBytes: .max)
}

extension DBusError.Name {
    /// A limit was passed: a call's body is too large, its arguments pass their decoding
    /// budget, or the bus refused a match rule past its per-connection limit.
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
}

extension ErrorName {
    /// `org.freedesktop.DBus.Error.LimitsExceeded`.
    public static let limitsExceeded: ErrorName = "org.freedesktop.DBus.Error.LimitsExceeded"
}
