#if DEBUG
package import Udev
#endif

/// How a udev source behaves: `PowerSupplyConfiguration` (`power_supply` devices) and
/// `DisplayConfiguration` (`backlight` devices) are this type for their device readings.
///
/// `Devices` only tells the two sources' configurations apart (`PowerSupplyReading`,
/// `BacklightReading`); both take the same settings.
public struct UdevSourceConfiguration<Devices>: Sendable {
    /// How often to read every device again, to catch changes that came without a uevent, while
    /// there is a device to read; `nil` for never. Default 60 s (upowerd polls every 30 s).
    public var rereadInterval: Duration?

    #if DEBUG
    /// A test hook that makes the udev monitor report failures such as `ENOBUFS`. Only in debug
    /// builds, and not part of the public API.
    package var faults: UdevFaultInjector?

    /// Creates a configuration, with a test hook.
    package init(rereadInterval: Duration? = .seconds(60), faults: UdevFaultInjector?) {
        self.rereadInterval = rereadInterval
        self.faults = faults
    }
    #endif

    /// Creates a configuration.
    public init(rereadInterval: Duration? = .seconds(60)) {
        self.rereadInterval = rereadInterval
    }

    /// The default configuration: a re-read every 60 s.
    public init() {
        self.init(rereadInterval: .seconds(60))
    }
}

extension UdevSourceConfiguration: SystemSourceConfiguration where Devices: UdevSourceReading {
    /// The source of the readings (`PowerSupplyReading.source`, `BacklightReading.source`).
    public static var source: SystemSourceDefinition<Self> { Devices.source }
}

/// How `PowerSupplySource` behaves: its re-read interval.
public typealias PowerSupplyConfiguration = UdevSourceConfiguration<PowerSupplyReading>

/// How `DisplaySource` behaves: its re-read interval.
public typealias DisplayConfiguration = UdevSourceConfiguration<BacklightReading>
