/// The states of a window in KDE's plasma-window-management protocol
/// (`org_kde_plasma_window.state_changed`, whose bits are `org_kde_plasma_window_management.state`).
public struct PlasmaWindowState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's bitfield as it is.
    public let rawValue: UInt32
    /// The set with these bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Active: the window has the focus (bit 0).
    public static let active = PlasmaWindowState(rawValue: 1 << 0)
    /// Minimized (bit 1).
    public static let minimized = PlasmaWindowState(rawValue: 1 << 1)
    /// Maximized (bit 2).
    public static let maximized = PlasmaWindowState(rawValue: 1 << 2)
    /// Fullscreen (bit 3).
    public static let fullscreen = PlasmaWindowState(rawValue: 1 << 3)
    /// Asks for attention (bit 7).
    public static let demandsAttention = PlasmaWindowState(rawValue: 1 << 7)
    /// Not shown in a task bar (bit 12, since version 2): what KWin says of panels, the desktop,
    /// notifications and other windows that are not an app's own.
    public static let skipTaskbar = PlasmaWindowState(rawValue: 1 << 12)

    /// The named members' names, e.g. `[active, maximized]`.
    public var description: String {
        let names: [(PlasmaWindowState, String)] = [
            (.active, "active"), (.minimized, "minimized"), (.maximized, "maximized"), (.fullscreen, "fullscreen"),
            (.demandsAttention, "demandsAttention"), (.skipTaskbar, "skipTaskbar"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}
