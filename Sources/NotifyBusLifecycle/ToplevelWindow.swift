/// One toplevel window as a compositor reports it: what the lifecycle policy needs of it.
package struct ToplevelWindow: Sendable, Hashable {
    /// The backend's name for the window, unique while it is open (sway's container id; a
    /// counter for the wlr protocol's handles and for KDE's windows).
    package var id: UInt64
    /// Its app id (Wayland `app_id`); `nil` or empty: the window is not tracked.
    package var appID: String?
    /// The process that owns it, where the backend knows it (sway's IPC and KDE's protocol do;
    /// the wlr protocol does not).
    package var pid: Int32?
    /// Whether it is activated: sway's `focused`, the wlr protocol's `activated` state, KDE's
    /// `active` state.
    package var activated: Bool

    /// A window.
    package init(id: UInt64, appID: String?, pid: Int32? = nil, activated: Bool) {
        self.id = id
        self.appID = appID
        self.pid = pid
        self.activated = activated
    }
}

/// What a window backend reports, on its loop's thread.
package enum ToplevelUpdate: Sendable, Hashable {
    /// Every open toplevel window, each time any of them changed (appeared, closed, changed app
    /// id or activation): the first one is the first list known.
    case windows([ToplevelWindow])
    /// The connection to the compositor failed or ended; nothing more comes from this backend.
    case lost(reason: String)
}
