import DBus
import EpollLoop
import NotifyBus

/// Orientation, proximity and ambient light from iio-sensor-proxy (`net.hadess.SensorProxy`
/// on the system bus), published as CONTRACT.md §1's `orientation`, `proximity` and `light`.
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
/// reported in `problems` and skipped; the other values keep flowing.
public final class SensorProxySource: ProblemReportingSource {
    /// How the source behaves.
    public struct Configuration: Sendable {
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

    /// `"sensors"`.
    public let name = "sensors"
    /// `orientation`, `proximity`, `light`.
    public let keyPatterns: [KeyPattern] = ["orientation", "proximity", "light"]
    /// The bus it publishes to.
    public let bus: NotificationBus
    /// Its configuration.
    public let configuration: Configuration
    /// Problems met and skipped (wrong types, malformed signals, failed claims).
    public let problems = SourceProblemLog()

    private let host: LoopSourceHost<SensorProxyWatcher>

    /// Creates the source; nothing happens until `run()`.
    /// - Parameter loop: the event loop for its D-Bus connection, shared with other sources;
    ///   when `nil`, `run()` starts one and stops it on return.
    public init(bus: NotificationBus, loop: EventLoopThread? = nil, configuration: Configuration = Configuration()) {
        self.bus = bus
        self.configuration = configuration
        self.host = LoopSourceHost(name: "sensors", loop: loop)
    }

    /// The status it last reported.
    public var status: SourceStatus { host.reporter.current }

    /// The current status, then every change, until `run()` returns.
    public func statusUpdates() -> AsyncStream<SourceStatus> { host.reporter.updates() }

    /// Watches until the task is cancelled, then releases its claims and returns.
    /// - Throws: `SourceError.alreadyRunning`, `SourceError.eventLoop`.
    public func run() async throws {
        try await host.run(bus: bus, configuration: configuration, problems: problems)
    }

    /// Reads every property again and publishes what differs; returns when done.
    public func reread() async { await host.reread() }

    /// CONTRACT.md §1's orientation for an `AccelerometerOrientation` value; `nil` for an unknown one.
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
