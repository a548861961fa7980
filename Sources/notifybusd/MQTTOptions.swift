import ArgumentParser
import NotifyBus
import NotifyBusMQTT

/// `--mqtt URL [--mqtt-config FILE] [--mqtt-prefix P] [--mqtt-host-id ID] [--mqtt-pattern PATTERN]...`
/// (specification: Publishing a fleet to MQTT): the broker the daemon also publishes its bus to.
struct MQTTOptions: ParsableArguments {
    @Option(name: .customLong("mqtt"), help: ArgumentHelp(
        "Also publish the bus to this MQTT broker: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS).",
        valueName: "url"))
    var url: String?

    @Option(name: .customLong("mqtt-config"), help: ArgumentHelp(
        "A file of key = value lines: username, password, ca-file, cert-file, key-file, keepalive, client-id.",
        valueName: "file"))
    var configFile: String?

    @Option(name: .customLong("mqtt-prefix"), help: ArgumentHelp(
        "The first topic levels (default: notifybus).", valueName: "prefix"))
    var prefix: String?

    @Option(name: .customLong("mqtt-host-id"), help: ArgumentHelp(
        "This host's topic level (default: the hostname).", valueName: "id"))
    var hostID: String?

    @Option(name: .customLong("mqtt-pattern"), help: ArgumentHelp(
        "Publish only the keys matching this pattern (repeatable; default: **).", valueName: "pattern"))
    var patterns: [String] = []

    func validate() throws {
        do {
            _ = try configuration()
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The link's configuration, or `nil` without `--mqtt`.
    /// - Throws: `MQTTConfigurationError` naming what is wrong (the tools exit 64 with it).
    func configuration() throws(MQTTConfigurationError) -> MQTTLinkConfiguration? {
        guard let url else {
            if configFile != nil || prefix != nil || hostID != nil || !patterns.isEmpty {
                throw MQTTConfigurationError("--mqtt-config, --mqtt-prefix, --mqtt-host-id and --mqtt-pattern need --mqtt URL")
            }
            return nil
        }
        var broker = try MQTTBrokerSettings(url: url)
        if let configFile { try broker.readConfig(path: configFile) }
        return try MQTTLinkConfiguration(
            broker: broker, prefix: prefix ?? MQTTLinkConfiguration.defaultPrefix, hostID: hostID,
            patterns: patterns.map { KeyPattern($0) })
    }
}
