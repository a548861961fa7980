package import DBus

/// The names and limits of `notifybusd`'s D-Bus interface, Version 2, shared by the daemon and
/// its clients.
package enum BusInterface {
    /// The daemon's well-known name on the session bus.
    package static let busName: BusName = "org.notifybus.Bus1"
    /// The bus object.
    package static let path: ObjectPath = "/org/notifybus/Bus1"
    /// The bus object's interface: `Subscribe`, `GetValue`, `Snapshot`, `Sources`, `Version`.
    package static let interface: InterfaceName = "org.notifybus.Bus1"
    /// A subscription object's interface: `Suspend`, `Resume`, `Cancel`, `Resync`, `State`, `Events`.
    package static let subscriptionInterface: InterfaceName = "org.notifybus.Subscription1"
    /// The signal that carries a subscription's events to its owner.
    package static let eventsSignal: MemberName = "Events"
    /// The version the `Version` property reports: 2 (elements numbered by `seq`, notifications
    /// with `kind`, `first` and `last`, `Resync`, signals of at most 1 MiB).
    package static let version: UInt32 = 2

    /// The path every subscription object is below: `/org/notifybus/Bus1/subscription`.
    package static let subscriptionPrefix: ObjectPath = "/org/notifybus/Bus1/subscription"

    /// The path of subscription number `number`: `/org/notifybus/Bus1/subscription/<n>`.
    package static func subscriptionPath(_ number: UInt64) -> ObjectPath {
        ObjectPath(rawValue: "\(subscriptionPrefix.rawValue)/\(number)") ?? path
    }

    /// The number of the subscription at `path`, when `path` is one's (`<n>` in its decimal
    /// form, without leading zeros).
    package static func subscriptionNumber(of path: ObjectPath) -> UInt64? {
        let text = path.rawValue
        let prefix = subscriptionPrefix.rawValue + "/"
        guard text.hasPrefix(prefix), let number = UInt64(text.dropFirst(prefix.count)),
              text.utf8.count == prefix.utf8.count + String(number).utf8.count
        else { return nil }
        return number
    }

    /// Error names of the interface.
    package enum ErrorName {
        /// `GetValue` of a key the bus has no value for.
        package static let unknownKey = "org.notifybus.Error.UnknownKey"
        /// A bound of the daemon passed: subscriptions (per connection, per application, in all),
        /// patterns in one call or bytes in one pattern or in all, a call's body, a reply's size.
        package static let limitsExceeded = "org.notifybus.Error.LimitsExceeded"
    }

    /// The bounds the daemon keeps whatever its clients ask.
    package enum Limits {
        /// Subscriptions one connection may hold.
        package static let subscriptionsPerConnection = 64
        /// Subscriptions one application may hold: the processes of one app scope (a cgroup named
        /// `app-*.scope`), else one process.
        package static let subscriptionsPerApplication = 256
        /// Subscriptions all clients together may hold, unless `--max-subscriptions` says otherwise.
        package static let defaultMaximumSubscriptions = 4096
        /// Bytes of patterns all subscriptions together may keep.
        package static let patternBytesInAll = 16 << 20
        /// Bytes of a method call's body: a call past it is refused unread.
        package static let callBodyBytes = 128 << 10
        /// Bytes of one signal or reply of the daemon.
        package static let signalBytes = 1 << 20
        /// Patterns in one subscription or `Snapshot`.
        package static let patternsPerSubscription = 64
        /// Bytes in one pattern.
        package static let patternBytes = 1024
        /// The largest `limit` option.
        package static let maximumLimit = 65_536
        /// Entries held for one connection's suspended subscriptions together, and for one
        /// application's.
        package static let heldPerConnection = 65_536
        /// Entries held for all connections together, unless `--max-held` says otherwise.
        package static let defaultMaximumHeld = 1_048_576
    }
}
