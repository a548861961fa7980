/// What a udev source reads from each device of its subsystem, which also names the source:
/// `PowerSupplyReading` (the `power` source), `BacklightReading` (the `display` source).
///
/// A udev source's configuration is the `UdevSourceConfiguration` of its reading
/// (`PowerSupplyConfiguration`, `DisplayConfiguration`), which takes its source from here. The
/// conforming types are the built-in readings: a `SystemSourceDefinition` is made only by this
/// module.
public protocol UdevSourceReading: Sendable {
    /// The source that publishes these readings.
    static var source: SystemSourceDefinition<UdevSourceConfiguration<Self>> { get }
}
