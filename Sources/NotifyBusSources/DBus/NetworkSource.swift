public import DBus
public import NotifyBus

/// Connectivity and metering from NetworkManager (`org.freedesktop.NetworkManager` on the system
/// bus), published as the specification's `network/connectivity` (`"none"`, `"portal"`,
/// `"limited"`, `"full"`, `"unknown"`) and `network/metered` (`true`, `false`, or `null` when
/// unknown).
///
/// What it does:
/// - Reads `Connectivity` and `Metered` (both `u`) of `/org/freedesktop/NetworkManager` with
///   `GetAll` whenever NetworkManager gets an owner, then follows its `PropertiesChanged`.
/// - Maps them with `connectivity(_:)` and `metered(_:)`: a value outside 0–4 is `"unknown"`
///   and `null`; a property missing from `GetAll` counts as 0 (unknown).
/// - A property of another type than `u` is logged (with its key) and skipped.
/// - `reread()` reads both again.
///
/// Status: `running` while NetworkManager answers; `unavailable` while it is not running or the
/// bus is unreachable (the keys keep their last values; it keeps watching and reconnecting).
public typealias NetworkSource = SystemSource<NetworkConfiguration>

/// How `NetworkSource` behaves.
public struct NetworkConfiguration: Sendable {
    /// The bus NetworkManager is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration

    /// Creates a configuration.
    public init(address: DBusAddress = .system, connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10))) {
        self.address = address
        self.connection = connection
    }
}

extension SystemSource where Settings == NetworkConfiguration {
    /// The `network/connectivity` value of NetworkManager's `Connectivity` (`NMConnectivityState`):
    /// 1 `"none"`, 2 `"portal"`, 3 `"limited"`, 4 `"full"`; 0 and anything else `"unknown"`.
    public static func connectivity(_ state: UInt32) -> String {
        switch state {
        case 1: "none"
        case 2: "portal"
        case 3: "limited"
        case 4: "full"
        default: "unknown"
        }
    }

    /// The `network/metered` value of NetworkManager's `Metered` (`NMMetered`): 1 (yes) and 3
    /// (guess yes) `true`, 2 (no) and 4 (guess no) `false`; 0 (unknown) and anything else `null`.
    public static func metered(_ state: UInt32) -> JSONValue {
        switch state {
        case 1, 3: .bool(true)
        case 2, 4: .bool(false)
        default: .null
        }
    }
}
