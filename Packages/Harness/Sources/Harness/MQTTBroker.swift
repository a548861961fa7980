/// A real MQTT broker of a test's or a benchmark's own (`MosquittoBroker`, or another): where it
/// listens, and how `mosquitto_sub` reaches it.
public protocol MQTTBroker: Sendable {
    /// `mqtt://127.0.0.1:PORT` (or `mqtts://`).
    var url: String { get }
    /// A directory of its own, removed with the broker.
    var directory: String { get }
    /// Options of mosquitto_sub and mosquitto_pub for this broker.
    var clientOptions: [String] { get }
}

extension MQTTBroker {
    /// What a subscriber to `filter` receives within `seconds` (`mosquitto_sub -W`): one entry
    /// per message, `retained` telling a retained value from a live one, `qos` as delivered.
    /// `session` names a persistent session (clean session off), which the broker keeps while
    /// the client is away, queueing QoS 1 messages for it.
    public func receive(_ filter: String, seconds: Int = 1, session: String? = nil) async throws -> [Received] {
        var arguments = clientOptions + ["-t", filter, "-q", "1", "-W", "\(seconds)", "-F", "%r %q %t %p"]
        if let session { arguments += ["-c", "-i", session] }
        // mosquitto_sub -W ends with a status other than 0 when its time is up.
        let output = try await runCommandToEnd("/usr/bin/mosquitto_sub", arguments, environment: ChildProcess.environment()).output
        return output.split(separator: "\n").compactMap(Received.init)
    }

    /// The retained value of every topic under `filter` now.
    public func retained(_ filter: String) async throws -> [String: String] {
        var values: [String: String] = [:]
        for message in try await receive(filter) where message.retained { values[message.topic] = message.payload }
        return values
    }
}

/// A message as `mosquitto_sub -F "%r %q %t %p"` prints it.
public struct Received: Sendable, Hashable, CustomStringConvertible {
    /// Whether the broker sent it as a retained value (not a live one).
    public var retained: Bool
    /// The quality of service it was delivered with.
    public var qos: Int
    /// Its topic.
    public var topic: String
    /// Its payload, as text.
    public var payload: String

    /// The message of one line of `mosquitto_sub -F "%r %q %t %p"`; `nil` for another line.
    public init?(_ line: Substring) {
        let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let qos = Int(parts[1]) else { return nil }
        retained = parts[0] == "1"
        self.qos = qos
        topic = String(parts[2])
        payload = String(parts[3])
    }

    /// `R q1 topic payload` (`L` for a live message).
    public var description: String { "\(retained ? "R" : "L") q\(qos) \(topic) \(payload)" }
}
