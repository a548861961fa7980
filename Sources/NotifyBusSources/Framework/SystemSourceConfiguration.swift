/// The configuration of a built-in source, which also says what source it configures: every
/// `SystemSource` is made from one with the same initializer,
/// `SystemSource(bus:loop:configuration:logger:)`.
///
/// `LocaleConfiguration` configures the locale source, so `LocaleSource(bus: bus)` (a
/// `SystemSource<LocaleConfiguration>`) is the locale source with the default configuration,
/// and `LocaleSource(bus: bus, configuration: .init(files: ["/etc/locale.conf"]))` one with its
/// own. The conforming types are the built-in configurations: a `SystemSourceDefinition` is made
/// only by this module.
public protocol SystemSourceConfiguration: Sendable {
    /// The source this configuration configures: its name, its keys and how it watches.
    static var source: SystemSourceDefinition<Self> { get }

    /// The default configuration.
    init()
}
