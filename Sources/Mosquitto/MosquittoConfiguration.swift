/// How a `MosquittoClient` connects: broker, identity, session, credentials, TLS and will.
public struct MosquittoConfiguration: Sendable, Hashable {
    /// The MQTT protocol version spoken.
    public enum ProtocolVersion: String, Sendable, Hashable, CaseIterable {
        /// MQTT 3.1.1 (`MQTT_PROTOCOL_V311`).
        case v311 = "3.1.1"
        /// MQTT 5 (`MQTT_PROTOCOL_V5`).
        case v5 = "5"

        /// The version to try next when a broker refuses this one as unsupported: 3.1.1 after
        /// 5, nothing after 3.1.1.
        package var older: ProtocolVersion? { self == .v5 ? .v311 : nil }
    }

    /// TLS settings; present means the connection is encrypted.
    public struct TLS: Sendable, Hashable {
        /// The PEM file of the certificate authorities to trust; `nil`: the system's store.
        package var caFile: String?
        /// The client's PEM certificate, for brokers that authenticate clients by certificate.
        package var certFile: String?
        /// The client certificate's PEM private key (unencrypted).
        package var keyFile: String?

        /// TLS settings.
        package init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
        }
    }

    /// The message the broker publishes for the client when it vanishes (MQTT's last will).
    public struct Will: Sendable, Hashable {
        /// The topic.
        package var topic: String
        /// The payload.
        package var payload: [UInt8]
        /// 0, 1 or 2.
        package var qos: Int32
        /// Whether the broker retains it.
        package var retain: Bool

        /// A will.
        package init(topic: String, payload: [UInt8], qos: Int32 = 1, retain: Bool = true) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    /// The broker's host name or address.
    package var host: String
    /// The broker's TCP port.
    package var port: Int
    /// The client identifier (also the session's name on the broker).
    package var clientID: String
    /// Seconds between keepalive pings when nothing else is sent (5 to 65,535).
    package var keepalive: Int
    /// The protocol version.
    package var protocolVersion: ProtocolVersion
    /// Whether the broker forgets the session when the client disconnects (MQTT 3.1.1 clean
    /// session, MQTT 5 clean start with a session expiry of 0).
    package var cleanSession: Bool
    /// MQTT 5: how long the broker keeps a session that is not clean after the client is gone.
    package var sessionExpiry: Duration
    /// The user name, if the broker wants one.
    package var username: String?
    /// The password that goes with `username`.
    package var password: String?
    /// TLS, or `nil` for plain TCP.
    package var tls: TLS?
    /// The last will, if any.
    package var will: Will?
    /// How long to wait for the broker's CONNACK after starting to connect.
    package var connectTimeout: Duration = .seconds(10)
    /// MQTT 5: the largest packet the broker may send this client (it drops larger messages
    /// for it rather than send them); `nil`: no limit.
    package var maximumPacketSize: Int?

    /// A configuration; by default MQTT 5, plain TCP, a persistent session kept a week.
    public init(
        host: String, port: Int, clientID: String, keepalive: Int = 60, protocolVersion: ProtocolVersion = .v5,
        cleanSession: Bool = false, sessionExpiry: Duration = .seconds(7 * 86_400), username: String? = nil,
        password: String? = nil, tls: TLS? = nil, will: Will? = nil
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.keepalive = keepalive
        self.protocolVersion = protocolVersion
        self.cleanSession = cleanSession
        self.sessionExpiry = sessionExpiry
        self.username = username
        self.password = password
        self.tls = tls
        self.will = will
    }
}
