public import DBus

/// The names of `notifybusd`'s background tasks (`org.notifybus.Lifecycle1` on the bus object,
/// present with `--freeze-background`; specification: Freezing background apps), shared by the
/// daemon and its clients.
public enum LifecycleInterface {
    /// The interface, on `BusInterface.path`.
    public static let interface: InterfaceName = "org.notifybus.Lifecycle1"
    /// `BeginBackgroundTask(s reason) → (u task, u seconds)`.
    public static let beginBackgroundTask: MemberName = "BeginBackgroundTask"
    /// `EndBackgroundTask(u task)`.
    public static let endBackgroundTask: MemberName = "EndBackgroundTask"
    /// `BackgroundTaskExpiring(u task, u seconds)`, unicast to the task's connection.
    public static let backgroundTaskExpiring: MemberName = "BackgroundTaskExpiring"
    /// The caller's process is in no app unit under the cgroup root.
    public static let notAnApp = "org.notifybus.Error.NotAnApp"
    /// The most bytes of a task's reason (UTF-8).
    public static let reasonBytes = 256
}
