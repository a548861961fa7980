/// The states of a toplevel window in the wlr foreign-toplevel protocol
/// (`zwlr_foreign_toplevel_handle_v1.state`), the same as xdg-toplevel's of the same names.
package struct ForeignToplevelState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// One bit per state: bit `n` is the protocol's state value `n`.
    package let rawValue: UInt32
    /// The set with these bits.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Maximized (protocol value 0).
    package static let maximized = ForeignToplevelState(rawValue: 1 << 0)
    /// Minimized (protocol value 1).
    package static let minimized = ForeignToplevelState(rawValue: 1 << 1)
    /// Activated: the window has the focus (protocol value 2).
    package static let activated = ForeignToplevelState(rawValue: 1 << 2)
    /// Fullscreen (protocol value 3, since version 2).
    package static let fullscreen = ForeignToplevelState(rawValue: 1 << 3)

    /// The states a `state` event's array lists: its uint32 values; values this type does not
    /// name (a later version's) are kept as their bits when below 32, else ignored.
    package init(protocolValues: some Sequence<UInt32>) {
        var bits: UInt32 = 0
        for value in protocolValues where value < 32 { bits |= 1 << value }
        rawValue = bits
    }

    /// The members' names, e.g. `[activated, maximized]`.
    package var description: String {
        var names: [String] = []
        if contains(.activated) { names.append("activated") }
        if contains(.maximized) { names.append("maximized") }
        if contains(.minimized) { names.append("minimized") }
        if contains(.fullscreen) { names.append("fullscreen") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
