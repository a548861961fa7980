/// A source of toplevel windows on the loop thread: sway's IPC or the wlr protocol.
protocol ToplevelBackend: AnyObject {
    /// The compositor's PID (`SO_PEERCRED` of the socket), never to be frozen.
    var compositorPID: Int32? { get }
    /// Lets go of the connection; nothing is reported after it.
    func stop()
}

extension LifecycleDriver {
    /// Connects to the compositor as `configuration.toplevels` says.
    func makeBackend(onUpdate: @escaping (ToplevelUpdate) -> Void) throws -> any ToplevelBackend {
        throw LifecycleConfiguration.Problem(description: "no window backend is built in")
    }
}
