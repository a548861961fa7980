/// The states of a window in KDE's plasma-window-management protocol
/// (`org_kde_plasma_window.state_changed`, whose bits are `org_kde_plasma_window_management.state`).
package struct PlasmaWindowState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The protocol's bitfield as it is.
    package let rawValue: UInt32
    /// The set with these bits.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Active: the window has the focus (bit 0).
    package static let active = PlasmaWindowState(rawValue: 1 << 0)
    /// Minimized (bit 1).
    package static let minimized = PlasmaWindowState(rawValue: 1 << 1)
    /// Maximized (bit 2).
    package static let maximized = PlasmaWindowState(rawValue: 1 << 2)
    /// Fullscreen (bit 3).
    package static let fullscreen = PlasmaWindowState(rawValue: 1 << 3)
    /// Asks for attention (bit 7).
    package static let demandsAttention = PlasmaWindowState(rawValue: 1 << 7)
    /// Not shown in a task bar (bit 12, since version 2): what KWin says of panels, the desktop,
    /// notifications and other windows that are not an app's own.
    package static let skipTaskbar = PlasmaWindowState(rawValue: 1 << 12)

    /// The named members' names, e.g. `[active, maximized]`.
    package var description: String {
        let names: [(PlasmaWindowState, String)] = [
            (.active, "active"), (.minimized, "minimized"), (.maximized, "maximized"), (.fullscreen, "fullscreen"),
            (.demandsAttention, "demandsAttention"), (.skipTaskbar, "skipTaskbar"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}
