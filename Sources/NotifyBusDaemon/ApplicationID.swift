/// The application a client belongs to, for the bounds one application may use: the processes
/// of one app scope (a cgroup named `app-*.scope`, systemd's convention that GNOME, KDE and
/// Flatpak follow, so a Flatpak app and its `xdg-dbus-proxy` are one application), else one
/// process.
package enum ApplicationID: Sendable, Hashable, CustomStringConvertible {
    /// The app scope's group, e.g. `/user.slice/…/app.slice/app-flatpak-org.example.App-42.scope`.
    case scope(String)
    /// A process outside any app scope.
    case process(ProcessIdentity)

    /// The application of `process`, whose cgroup v2 group is `group` (`nil` when unknown): the
    /// outermost `app-*.scope` of the group's path and the path above it, else the process.
    package init(process: ProcessIdentity, group: String?) {
        if let group {
            var path = ""
            for component in group.split(separator: "/", omittingEmptySubsequences: true) {
                path += "/" + component
                if component.hasPrefix("app-"), component.hasSuffix(".scope"), component.count > 10 {
                    self = .scope(path)
                    return
                }
            }
        }
        self = .process(process)
    }

    /// The scope's group, or `process PID@START`.
    package var description: String {
        switch self {
        case .scope(let group): group
        case .process(let process): "process \(process)"
        }
    }
}
