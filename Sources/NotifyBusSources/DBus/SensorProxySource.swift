public import DBus
import NotifyBus

/// Orientation, proximity and ambient light from iio-sensor-proxy (`net.hadess.SensorProxy`
/// on the system bus), published as the specification's `orientation`, `proximity` and `light`.
///
/// ```swift
/// let sensors = SensorProxySource(bus: bus)
/// group.addTask { try await sensors.run() }   // until cancelled
/// ```
///
/// ## Values
/// | key | value | from |
/// |---|---|---|
/// | `orientation` | `"portrait"`, `"portrait-upside-down"`, `"landscape-left"`, `"landscape-right"`, `"unknown"` | `AccelerometerOrientation` |
/// | `proximity` | `true` (near) / `false` | `ProximityNear` |
/// | `light` | `{"level": number, "unit": "lux" or "vendor"}` | `LightLevel`, `LightLevelUnit` |
///
/// `AccelerometerOrientation` maps as: `normal` → `"portrait"`, `bottom-up` →
/// `"portrait-upside-down"`, `left-up` → `"landscape-left"`, `right-up` → `"landscape-right"`,
/// `undefined` → `"unknown"`. The landscapes are named after the side of the device that points
/// up: iio-sensor-proxy's `left-up` means the device's left edge is up (x axis pointing up,
/// rotated 90° clockwise from portrait), which we call `landscape-left`; `right-up` is
/// `landscape-right`. (The iio-sensor-proxy documentation describes the values only by the edge
/// that is up, so we keep that edge in the name rather than guess a screen-rotation convention.)
///
/// When a sensor goes away (its `Has…` property turns false), `orientation` becomes
/// `"unknown"` (as the daemon resets it) and `proximity` or `light` becomes `null`. When the
/// service stops, the last values stay; they are read again when it returns.
///
/// ## What it does
/// - Tracks the owner of `net.hadess.SensorProxy`. When the service appears (at start, after
///   a restart, after the bus came back), it reads every property (`GetAll`) and claims only
///   the sensors that exist (`ClaimAccelerometer`, `ClaimLight`, `ClaimProximity` per `Has…`).
/// - Readings come from `PropertiesChanged`, broadcast (iio-sensor-proxy 3.0) or unicast to
///   claimers (3.1 and later): both are accepted, from the service's current owner only.
/// - Readings are trusted only once claimed: a daemon publishes defaults (`undefined`, `false`,
///   `0`) before its first poll, so values read before the claim are not published. After
///   claiming, the first reading that arrives, or a re-read after `Configuration.settleDelay`
///   (for a value that did not change from the default), is published.
/// - A sensor plugged in later (`Has…` turns true) is claimed; one removed is forgotten
///   (iio-sensor-proxy 3.0 drops the claims of a removed sensor), and claimed again when it returns.
/// - On stop, it releases its claims (`Release…`) before closing its connection.
/// - Every read publishes through `publishIfChanged`: a restart that finds the same values publishes nothing.
///
/// Status: `running` while the service is there with at least one sensor; `unavailable` when the
/// service is absent, has no sensors, or the bus cannot be reached (it keeps watching and
/// reconnecting). A property of the wrong type, an unknown orientation, or a malformed signal is
/// logged and skipped; the other values keep flowing.
public typealias SensorProxySource = SystemSource<SensorProxyConfiguration>

/// How `SensorProxySource` behaves.
public struct SensorProxyConfiguration: Sendable {
    /// The bus the service is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// How long after a claim to read the sensor's value when no reading arrived.
    /// iio-sensor-proxy polls at ~700 ms; the default is 1.5 s.
    public var settleDelay: Duration
    /// Timeouts, and reconnection backoff when the bus goes away.
    public var connection: DBusConnection.Configuration

    /// Creates a configuration.
    public init(
        address: DBusAddress = .system, settleDelay: Duration = .milliseconds(1500),
        connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(5))
    ) {
        self.address = address
        self.settleDelay = settleDelay
        self.connection = connection
    }
}

extension SystemSource where Settings == SensorProxyConfiguration {
    /// The specification's orientation for an `AccelerometerOrientation` value; `nil` for an unknown one.
    public static func orientation(for value: String) -> String? {
        switch value {
        case "normal": "portrait"
        case "bottom-up": "portrait-upside-down"
        case "left-up": "landscape-left"
        case "right-up": "landscape-right"
        case "undefined": "unknown"
        default: nil
        }
    }
}
