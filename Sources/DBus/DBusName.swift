/// A name or path of the D-Bus message header, checked once against the D-Bus specification:
/// `BusName`, `ObjectPath`, `InterfaceName`, `MemberName` and `ErrorName` are this type with
/// their `Kind`.
///
/// It holds a string that libdbus accepts, so nothing past the check can make libdbus abort.
/// Make one from a runtime string with the throwing `init(validating:)` (or the failable
/// `init(rawValue:)`); a string literal is checked when it is used, and an invalid literal
/// stops the program (it is a programming error, not input). (An unlabeled `BusName("…")`
/// with a literal argument is a literal too, so the throwing initializer has a label.)
public struct DBusName<Kind: DBusNameKind>: RawRepresentable, Sendable, Hashable, Comparable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    /// The text, valid per `Kind.isValid(_:)`.
    public let rawValue: String

    /// The name `rawValue`, or `nil` when it is not a valid one of its kind.
    public init?(rawValue: String) {
        guard Kind.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A name taken from a message libdbus has read (and so validated).
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// Checks `text` against the specification.
    /// - Throws: `DBusError` (`InvalidArgs`) when `text` is not valid.
    public init(validating text: String) throws(DBusError) {
        guard let name = Self(rawValue: text) else { throw .invalidArgs("invalid \(Kind.words) '\(text)'") }
        self = name
    }

    /// Checks a literal; an invalid literal is a programming error and stops the program.
    public init(stringLiteral value: String) {
        guard let name = Self(rawValue: value) else { preconditionFailure("invalid \(Kind.words) literal '\(value)'") }
        self = name
    }

    /// What the name is, in words (`bus name`), for error messages.
    public static var kind: String { Kind.words }

    /// The name as written.
    public var description: String { rawValue }

    /// Orders by the text.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A kind of `DBusName`: what it is called and how it is checked.
public protocol DBusNameKind: Sendable {
    /// What a name of this kind is, in words (`bus name`).
    static var words: String { get }
    /// Whether `text` is a valid name of this kind.
    static func isValid(_ text: String) -> Bool
}
