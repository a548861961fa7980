import EpollLoop
import Logging
import NotifyBusLifecycle
import NotifyBusSources

extension NotifyBusDaemon {
    /// Starts the lifecycle of `configuration.lifecycle`, if any, on the daemon's loop: its
    /// status is the `lifecycle` entry of `Sources`, and before an app's `frozen` is published
    /// the daemon's freezer follower reads the cgroups, so that the app's own subscriptions are
    /// suspended first (specification: Freezing background apps). Returns the running lifecycle.
    func startLifecycle(on loop: EventLoopThread) -> LifecycleService? {
        guard let configuration = configuration.lifecycle else { return nil }
        let lifecycle = LifecycleService(configuration: configuration, bus: bus, loop: loop, logger: self.configuration.logger)
        do {
            try lifecycle.start(
                onStatus: { context, status in
                    context[local: BusService.key]?.setSource(
                        LifecycleService.sourceName, status: status.name, reason: status.reason ?? "")
                },
                beforeFrozen: { context in context[local: BusService.key]?.life?.rereadGroups() },
                connection: { context in context[local: BusService.key]?.connection })
        } catch {
            self.configuration.logger.error("cannot start the lifecycle: \(error)")
            return nil
        }
        return lifecycle
    }
}
