public import DBus
public import NotifyBus

/// A subscription held by `notifybusd` for this process: an `AsyncSequence` of the same
/// `SubscriptionEvent`s an in-process `Subscription` yields, and the handle to suspend, resume
/// and cancel it.
///
/// `suspend()`, `resume()` and `cancel()` send the call and return at once; calls leave in the
/// order they are made. The sequence ends when the subscription is cancelled, the client closed,
/// or the daemon leaves the bus. A notification's `kind`, `firstEventTime` and `lastEventTime`
/// are the daemon's, its times counted from the client's `origin`.
public final class RemoteSubscription: AsyncSequence, Sendable {
    /// A subscription yields notifications and the lifecycle marks between them.
    public typealias Element = SubscriptionEvent
    /// Iterating never throws.
    public typealias Failure = Never

    private let client: NotifyBusClient
    private let events: AsyncStream<SubscriptionEvent>
    /// Its object on the daemon, `/org/notifybus/Bus1/subscription/<n>`.
    public let path: ObjectPath

    init(client: NotifyBusClient, path: ObjectPath, events: AsyncStream<SubscriptionEvent>) {
        self.client = client
        self.path = path
        self.events = events
    }

    /// Asks the daemon to hold its notifications, collapsed per key (`Suspend`).
    public func suspend() { client.send("Suspend", to: path) }

    /// Asks the daemon to resume it and flush what it held (`Resume`).
    public func resume() { client.send("Resume", to: path) }

    /// Asks the daemon for a `resync` mark and every current value (`Resync`); the client does
    /// so by itself when it sees elements missing.
    public func resync() { client.send("Resync", to: path) }

    /// Cancels it on the daemon (`Cancel`); the sequence ends.
    public func cancel() {
        client.send("Cancel", to: path)
        client.router.finish(path)
    }

    /// An iterator over its events; make one per subscription.
    public func makeAsyncIterator() -> AsyncStream<SubscriptionEvent>.Iterator { events.makeAsyncIterator() }
}
