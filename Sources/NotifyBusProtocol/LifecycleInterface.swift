package import DBus

/// The names of `notifybusd`'s background tasks (`org.notifybus.Lifecycle1` on the bus object,
/// present with `--freeze-background`; specification: Freezing background apps), shared by the
/// daemon and its clients.
package enum LifecycleInterface {
    /// The interface, on `BusInterface.path`.
    package static let interface: InterfaceName = "org.notifybus.Lifecycle1"
    /// `BeginBackgroundTask(s reason) → (u task, u seconds)`.
    package static let beginBackgroundTask: MemberName = "BeginBackgroundTask"
    /// `EndBackgroundTask(u task)`.
    package static let endBackgroundTask: MemberName = "EndBackgroundTask"
    /// `BackgroundTaskExpiring(u task, u seconds)`, unicast to the task's connection.
    package static let backgroundTaskExpiring: MemberName = "BackgroundTaskExpiring"
    /// The caller's process is in no app unit under the cgroup root.
    package static let notAnApp = "org.notifybus.Error.NotAnApp"
    /// The most bytes of a task's reason (UTF-8).
    package static let reasonBytes = 256
}
