/// A name or path of the D-Bus message header, checked once against the D-Bus specification.
///
/// Each conforming type (`BusName`, `ObjectPath`, `InterfaceName`, `MemberName`, `ErrorName`)
/// holds a string that libdbus accepts, so nothing past the check can make libdbus abort.
/// Make one from a runtime string with the throwing `init(validating:)` (or the failable
/// `init(rawValue:)`); a string literal is checked when it is used, and an invalid literal
/// stops the program (it is a programming error, not input). (An unlabeled `BusName("…")`
/// with a literal argument is a literal too, so the throwing initializer has a label.)
public protocol DBusName: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral where RawValue == String, StringLiteralType == String
{
    /// What the name is, in words (`bus name`), for error messages.
    static var kind: String { get }
}

extension DBusName {
    /// Checks `text` against the specification.
    /// - Throws: `DBusError` (`InvalidArgs`) when `text` is not valid.
    public init(validating text: String) throws(DBusError) {
        guard let name = Self(rawValue: text) else { throw .invalidArgs("invalid \(Self.kind) '\(text)'") }
        self = name
    }

    /// Checks a literal; an invalid literal is a programming error and stops the program.
    public init(stringLiteral value: String) {
        guard let name = Self(rawValue: value) else { preconditionFailure("invalid \(Self.kind) literal '\(value)'") }
        self = name
    }

    /// The name as written.
    public var description: String { rawValue }

    /// Orders by the text.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
