import ArgumentParser
import NotifyBus
import NotifyBusCommandLine
import NotifyBusMQTT

/// `--mqtt URL [--mqtt-config FILE] [--mqtt-prefix P] [--mqtt-host-id ID] [--mqtt-pattern PATTERN]...`
/// (specification: Publishing a fleet to MQTT): the broker the daemon also publishes its bus to.
struct MQTTOptions: ConfigurationOptions {
    @OptionGroup var broker: MQTTBrokerOptions<Help>

    @Option(name: .customLong("mqtt-host-id"), help: ArgumentHelp(
        "This host's topic level (default: the hostname).", valueName: "id"))
    var hostID: String?

    @Option(name: .customLong("mqtt-pattern"), help: ArgumentHelp(
        "Publish only the keys matching this pattern (repeatable; default: **).", valueName: "pattern"))
    var patterns: [String] = []

    /// What notifybusd's help says of the broker options.
    enum Help: MQTTBrokerOptionsHelp {
        static let url = "Also publish the bus to this MQTT broker: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS)."
        static let configFile = "A file of key = value lines: username, password, ca-file, cert-file, key-file, keepalive, client-id."
        static let prefix = "The first topic levels (default: notifybus)."
    }

    /// The link's configuration, or `nil` without `--mqtt`.
    /// - Throws: `MQTTConfigurationError` naming what is wrong (the tools exit 64 with it).
    func configuration() throws(MQTTConfigurationError) -> MQTTLinkConfiguration? {
        let others: KeyValuePairs = ["--mqtt-host-id": hostID != nil, "--mqtt-pattern": !patterns.isEmpty]
        guard let (broker, prefix) = try broker.settings(with: others) else { return nil }
        return try MQTTLinkConfiguration(
            broker: broker, prefix: prefix, hostID: hostID, patterns: patterns.map { KeyPattern($0) })
    }
}
