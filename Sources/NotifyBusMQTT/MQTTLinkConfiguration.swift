package import Mosquitto
public import NotifyBus
import SystemSupport

/// What `notifybusd --mqtt` publishes and where (specification: Publishing a fleet to MQTT).
public struct MQTTLinkConfiguration: Sendable, Hashable {
    /// The broker and how to reach it.
    package var broker: MQTTBrokerSettings
    /// The first topic levels (may contain `/`); default `notifybus`.
    package var prefix: String
    /// This host's topic level; default the hostname.
    package var hostID: String
    /// The keys published; default every key.
    package var patterns: [KeyPattern]
    /// The most keys held while the broker is away (the link's suspended subscription's limit).
    package var limit: Int

    /// The default prefix.
    public static let defaultPrefix = "notifybus"

    /// A configuration, checked.
    /// - Throws: `MQTTConfigurationError` for a prefix or host id that cannot be a topic level,
    ///   or a pattern with an empty segment.
    public init(
        broker: MQTTBrokerSettings, prefix: String = MQTTLinkConfiguration.defaultPrefix, hostID: String? = nil,
        patterns: [KeyPattern] = [.all], limit: Int = 65_536
    ) throws(MQTTConfigurationError) {
        if let problem = MQTTTopic.prefixProblem(prefix) { throw MQTTConfigurationError("--mqtt-prefix: \(problem)") }
        let id = hostID ?? HostName.current
        if let problem = MQTTTopic.hostIDProblem(id) { throw MQTTConfigurationError("--mqtt-host-id: \(problem)") }
        for pattern in patterns {
            if let problem = KeyPattern.emptySegmentProblem(in: pattern.text) {
                throw MQTTConfigurationError("--mqtt-pattern \"\(pattern.text)\": \(problem)")
            }
        }
        self.broker = broker
        self.prefix = prefix
        self.hostID = id
        self.patterns = patterns.isEmpty ? [.all] : patterns
        self.limit = max(1, limit)
    }

    /// The client identifier: the config file's `client-id`, else `notifybus-<host-id>`.
    package var clientID: String { broker.clientID ?? "notifybus-\(hostID)" }

    /// The topic of `key`.
    package func topic(for key: String) -> String { MQTTTopic.topic(prefix: prefix, hostID: hostID, key: key) }

    /// This host's availability topic.
    package var onlineTopic: String { MQTTTopic.onlineTopic(prefix: prefix, hostID: hostID) }

    /// The libmosquitto configuration speaking `protocolVersion`: a persistent session, and
    /// the will that sets `$online` to `false`, retained, QoS 1.
    package func mosquittoConfiguration(_ protocolVersion: MosquittoConfiguration.ProtocolVersion) -> MosquittoConfiguration {
        broker.mosquittoConfiguration(
            clientID: clientID, cleanSession: false,
            will: .init(topic: onlineTopic, payload: Array("false".utf8), qos: 1, retain: true),
            protocolVersion: protocolVersion)
    }
}
