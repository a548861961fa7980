import CMosquitto

/// A message received on a subscription.
public struct MosquittoMessage: Sendable, Hashable {
    /// The topic it was published to.
    public var topic: String
    /// Its payload bytes.
    public var payload: [UInt8]
    /// Whether the broker sent it from its retained store (a value published before the
    /// subscription) rather than live.
    public var retained: Bool
    /// The QoS it arrived with.
    package var qos: Int32

    /// A message.
    package init(topic: String, payload: [UInt8], retained: Bool, qos: Int32) {
        self.topic = topic
        self.payload = payload
        self.retained = retained
        self.qos = qos
    }
}

// libmosquitto's callbacks run inside `mosquitto_loop_read`, `_write` and `_misc`, on the loop
// thread. Each only records an event; `synchronize()` hands the events over after the library
// returns. `userdata` is the MosquittoClient, unretained: it destroys the C object (and with it
// the callbacks) before it goes away.

extension MosquittoClient {
    func installCallbacks() {
        mosquitto_connect_v5_callback_set(handle) { _, userdata, code, flags, properties in
            guard let client = client(userdata) else { return }
            if code == 0 {
                var serverKeepalive: UInt16 = 0
                if mosquitto_property_read_int16(properties, Int32(MQTT_PROP_SERVER_KEEP_ALIVE.rawValue), &serverKeepalive, false) != nil {
                    client.keepalive = Int(serverKeepalive)
                }
                client.pending.append(.connected(sessionPresent: flags & 1 != 0))
            } else {
                client.pending.append(
                    .refused(reason: client.connackReason(code), unsupportedVersion: client.isUnsupportedVersion(code)))
            }
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, userdata, code, _ in
            guard let client = client(userdata) else { return }
            client.pending.append(.disconnected(reason: client.disconnectReason(code)))
        }
        mosquitto_publish_v5_callback_set(handle) { _, userdata, messageID, reasonCode, _ in
            client(userdata)?.pending.append(.acknowledged(messageID: messageID, reasonCode: reasonCode))
        }
        mosquitto_message_v5_callback_set(handle) { _, userdata, message, _ in
            guard let client = client(userdata), let message else { return }
            let raw = message.pointee
            let topic = raw.topic.map { String(cString: $0) } ?? ""
            var payload: [UInt8] = []
            if let bytes = raw.payload, raw.payloadlen > 0 {
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(raw.payloadlen)))
            }
            client.pending.append(
                .message(MosquittoMessage(topic: topic, payload: payload, retained: raw.retain, qos: raw.qos)))
        }
        mosquitto_log_callback_set(handle) { _, userdata, level, text in
            guard level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0, let text, let client = client(userdata) else { return }
            client.lastLoggedError = String(cString: text)
        }
    }

    /// A refusal in words: MQTT 3.1.1 CONNACK codes, MQTT 5 reason codes.
    fileprivate func connackReason(_ code: Int32) -> String {
        let text = configuration.protocolVersion == .v5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code)
        return text.map { String(cString: $0) } ?? "refused with code \(code)"
    }

    /// Whether refusal `code` says the broker does not speak this protocol version. libmosquitto
    /// reports a 3.1.1 broker's CONNACK 1 to an MQTT 5 CONNECT as reason code 132.
    fileprivate func isUnsupportedVersion(_ code: Int32) -> Bool {
        configuration.protocolVersion == .v5
            ? code == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue)
            : code == Int32(CONNACK_REFUSED_PROTOCOL_VERSION.rawValue)
    }

    /// Why a connection ended (`nil`: it was asked to), with what libmosquitto logged last.
    fileprivate func disconnectReason(_ code: Int32) -> String? {
        guard code != 0 else { return nil }
        // An MQTT 5 broker's DISCONNECT carries a reason code (128 and up); libmosquitto's own
        // errors are small numbers.
        if code >= 128, let text = mosquitto_reason_string(code) {
            return "the broker disconnected: \(String(cString: text))"
        }
        if code == Int32(MOSQ_ERR_KEEPALIVE.rawValue) {
            return "no answer from the broker within the keepalive interval"
        }
        var reason = MosquittoError.reason(for: code)
        if code == Int32(MOSQ_ERR_TLS.rawValue) || code == Int32(MOSQ_ERR_ERRNO.rawValue) || code == Int32(MOSQ_ERR_CONN_LOST.rawValue),
           let logged = lastLoggedError
        {
            reason += " (\(logged))"
        }
        return reason
    }
}

private func client(_ userdata: UnsafeMutableRawPointer?) -> MosquittoClient? {
    guard let userdata else { return nil }
    let client = Unmanaged<MosquittoClient>.fromOpaque(userdata).takeUnretainedValue()
    return client.isClosed ? nil : client
}
