import EpollLoop
import SystemSupport

/// A broker connection that lives in an event loop's storage (the link, a fleet watcher's
/// connection): it looks its broker's host name up off the loop before each attempt.
protocol BrokerHostResolving: AnyObject, SendableMetatype {
    /// The lookup of attempt `attempt` ended: `nil` when the name resolved, else why not.
    func resolved(attempt: UInt64, failure: HostLookup.Failure?)
}

extension LoopLocalKey where Value: BrokerHostResolving {
    /// The lookup of the connection under this key on `loop`: `HostLookup.resolve` on a thread
    /// of its own, its outcome handed back on the loop thread to the connection, if it is still
    /// there.
    func hostLookup(on loop: EventLoopThread) -> @Sendable (_ host: String, _ attempt: UInt64) -> Void {
        { host, attempt in
            HostLookup.resolve(host) { failure in
                try? loop.execute { context in context[local: self]?.resolved(attempt: attempt, failure: failure) }
            }
        }
    }
}
