/// The body of a method call, read on demand: its size and its arrays' element counts without
/// decoding anything, and its arguments within a budget.
///
/// `DBusMessage` is one; `DBusDispatcher.decide(_:body:)` takes any, so a test or a fuzzer can
/// watch what dispatch reads.
public protocol DBusCallBody {
    /// The body's length in bytes as marshalled, found without decoding an argument.
    var bodySize: Int { get }
    /// The number of elements of the argument at `index` when it is an array; `nil` otherwise.
    func elementCount(ofArgument index: Int) -> Int?
    /// The arguments, decoded within `budget`.
    /// - Throws: `DBusError` named `limitsExceeded` past the budget, or why they cannot be read.
    func arguments(within budget: DBusDecodingBudget, limitsExceeded: ErrorName) throws(DBusError) -> [DBusValue]
}

/// A call's arguments before they are decoded, as a method's `DBusMethod.precheck` sees them:
/// the body's size and the element counts of its arrays, so a service can refuse "more than
/// 64 patterns" without decoding a million strings.
public struct DBusArgumentPreview {
    private let body: any DBusCallBody

    /// A preview of `body`.
    public init(_ body: any DBusCallBody) {
        self.body = body
    }

    /// The body's length in bytes as marshalled.
    public var bodySize: Int { body.bodySize }

    /// The number of elements of the argument at `index` when it is an array (a dictionary's
    /// entries); `nil` otherwise. For `DBusMessage`, `dbus_message_iter_get_element_count`: no
    /// element is decoded, though an array of strings is walked to be counted.
    public func elementCount(ofArgument index: Int) -> Int? {
        body.elementCount(ofArgument: index)
    }
}
