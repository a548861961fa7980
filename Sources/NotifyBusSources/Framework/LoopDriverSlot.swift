import EpollLoop
import Logging
import NotifyBus

/// What the handle of a bus's driver on an event loop keeps (`MQTTLinkService`,
/// `LifecycleService`): what the driver is made with, the loop it runs on, and the key it lives
/// under in the loop's storage. The driver itself is made, kept and used on the loop thread only.
package struct LoopDriverSlot<Configuration: Sendable, Driver>: Sendable {
    /// What the driver runs with.
    package let configuration: Configuration
    /// The bus the driver serves.
    package let bus: NotificationBus
    /// The loop the driver runs on.
    package let loop: EventLoopThread
    /// Where the driver logs.
    package let logger: Logger
    /// The driver's key in the loop's storage.
    package let key = LoopLocalKey<Driver>()

    /// A slot for a driver on `loop`; no driver is made before `start`.
    package init(configuration: Configuration, bus: NotificationBus, loop: EventLoopThread, logger: Logger) {
        self.configuration = configuration
        self.bus = bus
        self.loop = loop
        self.logger = logger
    }

    /// Makes the driver on the loop thread (`make`, given this slot and the loop's context),
    /// keeps it under `key`, then runs `start` on it; nothing when a driver is kept already.
    /// - Throws: `EventLoopError.shutDown` when the loop no longer runs.
    package func start(
        _ make: @escaping @Sendable (Self, LoopContext) -> Driver, then start: @escaping @Sendable (Driver) -> Void
    ) throws(EventLoopError) {
        try loop.execute { [self] context in
            guard context[local: key] == nil else { return }
            let driver = make(self, context)
            context[local: key] = driver
            start(driver)
        }
    }

    /// What `read` says of the driver, on the loop thread; `nil` when no driver is kept or the
    /// loop no longer runs.
    package func read<Value: Sendable>(_ read: @escaping @Sendable (Driver) -> Value) async -> Value? {
        let key = self.key
        return try? await loop.submit { context in context[local: key].map(read) } ?? nil
    }
}
