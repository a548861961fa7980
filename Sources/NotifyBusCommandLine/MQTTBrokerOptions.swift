package import ArgumentParser
package import NotifyBusMQTT

/// What a tool's help says of `--mqtt`, `--mqtt-config` and `--mqtt-prefix`: what the broker
/// is for there (notifybusd publishes its bus to it, notifywatch watches a fleet through it).
package protocol MQTTBrokerOptionsHelp {
    /// The help of `--mqtt <url>`.
    static var url: String { get }
    /// The help of `--mqtt-config <file>`.
    static var configFile: String { get }
    /// The help of `--mqtt-prefix <prefix>`.
    static var prefix: String { get }
}

/// `--mqtt URL [--mqtt-config FILE] [--mqtt-prefix PREFIX]` (specification: Publishing a fleet
/// to MQTT): the broker, how to talk to it, and the first topic levels. notifybusd and
/// notifywatch both take this option group, each with the help of its own `Help`.
///
/// The options are checked by `settings(with:)`, which the tools call from their `validate()`
/// (an `MQTTConfigurationError` becomes their exit 64) and again when they run.
package struct MQTTBrokerOptions<Help: MQTTBrokerOptionsHelp>: ParsableArguments {
    /// `--mqtt`: `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`.
    @Option(name: .customLong("mqtt"), help: ArgumentHelp(Help.url, valueName: "url"))
    package var url: String?

    /// `--mqtt-config`: a file of `key = value` lines (`MQTTBrokerSettings.configKeys`).
    @Option(name: .customLong("mqtt-config"), help: ArgumentHelp(Help.configFile, valueName: "file"))
    package var configFile: String?

    /// `--mqtt-prefix`: the first topic levels; default `MQTTLinkConfiguration.defaultPrefix`.
    @Option(name: .customLong("mqtt-prefix"), help: ArgumentHelp(Help.prefix, valueName: "prefix"))
    package var prefix: String?

    /// None of the options given.
    package init() {}

    /// The broker (the URL's settings, then the config file's) and the prefix, checked; `nil`
    /// without `--mqtt`.
    /// - Parameter others: the tool's further options that need `--mqtt`, by name, in the order
    ///   its help lists them, each with whether it was given.
    /// - Throws: `MQTTConfigurationError` naming what is wrong: an option given without `--mqtt`
    ///   (the message lists them all), a URL or config file that cannot be used, a prefix that
    ///   cannot be topic levels.
    package func settings(
        with others: KeyValuePairs<String, Bool> = [:]
    ) throws(MQTTConfigurationError) -> (broker: MQTTBrokerSettings, prefix: String)? {
        guard let url else {
            if configFile != nil || prefix != nil || others.contains(where: \.value) {
                var names = ["--mqtt-config", "--mqtt-prefix"] + others.map(\.key)
                let last = names.removeLast()
                throw MQTTConfigurationError("\(names.joined(separator: ", ")) and \(last) need --mqtt URL")
            }
            return nil
        }
        var broker = try MQTTBrokerSettings(url: url)
        if let configFile { try broker.readConfig(path: configFile) }
        let prefix = self.prefix ?? MQTTLinkConfiguration.defaultPrefix
        if let problem = MQTTTopic.prefixProblem(prefix) { throw MQTTConfigurationError("--mqtt-prefix: \(problem)") }
        return (broker, prefix)
    }
}
