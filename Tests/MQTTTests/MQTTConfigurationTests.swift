import Mosquitto
import NotifyBus
import NotifyBusMQTT
import Testing

@Suite struct MQTTConfigurationTests {
    @Test func urls() throws {
        let plain = try MQTTBrokerSettings(url: "mqtt://broker.example")
        #expect(plain.host == "broker.example" && plain.port == 1883 && !plain.usesTLS)
        let tls = try MQTTBrokerSettings(url: "mqtts://10.0.0.2:9883")
        #expect(tls.host == "10.0.0.2" && tls.port == 9883 && tls.usesTLS)
        let v6 = try MQTTBrokerSettings(url: "mqtt://[::1]:1884")
        #expect(v6.host == "::1" && v6.port == 1884 && v6.url == "mqtt://[::1]:1884")
        for bad in ["http://a", "mqtt://", "mqtt://a:0", "mqtt://a:70000", "mqtt://a:x", "mqtt://u:p@a", "mqtt://a/topic", "mqtt://[::1"] {
            #expect(throws: MQTTConfigurationError.self) { try MQTTBrokerSettings(url: bad) }
        }
    }

    @Test func configFiles() throws {
        var settings = try MQTTBrokerSettings(url: "mqtt://localhost")
        try settings.readConfig(text: """
            # the fleet's broker
            username = kiosk
            password = s3cr=t with spaces

            keepalive = 30
            client-id = kiosk-7
            """, path: "link.conf")
        #expect(settings.username == "kiosk" && settings.password == "s3cr=t with spaces")
        #expect(settings.keepalive == 30 && settings.clientID == "kiosk-7")
        let cases: [(String, String)] = [
            ("colour = blue", "unknown key \"colour\""),
            ("keepalive = 2", "keepalive"),
            ("keepalive = soon", "keepalive"),
            ("username", "expected key = value"),
            ("ca-file = /nonexistent/ca.pem", "cannot be read"),
            // The version is not set: MQTT 5 is tried first, 3.1.1 where the broker refuses it.
            ("protocol = 5", "unknown key \"protocol\""),
            ("username = a\nusername = b", "given twice"),
            ("ca-file = /etc/passwd", "need an mqtts:// URL"),
        ]
        for (text, expected) in cases {
            var fresh = try MQTTBrokerSettings(url: "mqtt://localhost")
            do {
                try fresh.readConfig(text: text, path: "bad.conf")
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
                #expect(error.message.hasPrefix("bad.conf"))
            }
        }
        var missing = try MQTTBrokerSettings(url: "mqtt://localhost")
        #expect(throws: MQTTConfigurationError.self) { try missing.readConfig(path: "/nonexistent/link.conf") }
    }

    @Test func linkDefaults() throws {
        let configuration = try MQTTLinkConfiguration(broker: MQTTBrokerSettings(url: "mqtt://localhost"), hostID: "k1")
        #expect(configuration.clientID == "notifybus-k1")
        #expect(configuration.onlineTopic == "notifybus/k1/$online")
        #expect(configuration.patterns == [.all])
        #expect(configuration.limit == 65_536)
        let first = configuration.mosquittoConfiguration(.v5)
        #expect(first.will?.payload == Array("false".utf8))
        #expect(first.cleanSession == false && first.protocolVersion == .v5)
        #expect(throws: MQTTConfigurationError.self) {
            try MQTTLinkConfiguration(broker: MQTTBrokerSettings(url: "mqtt://localhost"), hostID: "a/b")
        }
    }
}
