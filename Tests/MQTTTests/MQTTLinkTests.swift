import NotifyBus
import NotifyBusMQTT
import NotifyBusSources
import SystemSupport
import TestSupport
import Testing

/// The link against a real Mosquitto broker: what the broker holds and what a subscriber
/// receives, read with `mosquitto_sub`.
@Suite(.serialized) struct MQTTLinkTests {
    @Test func currentValuesThenLiveValuesRetainedAtQoS1() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("battery/BAT0/level", 0.5)
        bus.publish("battery/BAT0/state", "charging")
        bus.publish("power/AC/online", true)
        let bed = try LinkBed(broker: broker, bus: bus, patterns: ["battery/**"])
        #expect(await bed.waitUntilRunning())
        #expect(await bed.waitUntilSettled())

        let first = try await broker.retained(bed.everything)
        #expect(Set(first.keys) == [bed.topic("battery/BAT0/level"), bed.topic("battery/BAT0/state"), "nb/host-1/$online"])
        #expect(first["nb/host-1/$online"] == "true")
        let level = try #require(first.payload(bed.topic("battery/BAT0/level")))
        #expect(level.value == 0.5 && level.coalesced == 0)
        #expect(WallTime(rfc3339: level.time) != nil)
        let messages = try await broker.receive(bed.everything)
        #expect(messages.count == 3 && messages.allSatisfy { $0.qos == 1 && $0.retained }, "\(messages)")

        bus.publish("battery/BAT0/level", 0.49)
        bus.publish("power/AC/online", false)
        #expect(await eventually { (try? await broker.retained(bed.everything).payload(bed.topic("battery/BAT0/level")))?.value == 0.49 })
        let live = try #require(try await broker.retained(bed.everything).payload(bed.topic("battery/BAT0/level")))
        #expect(live.coalesced == 1)
        // `power/AC/online` is not among the patterns: the host has its battery keys and nothing else.
        let all = try await broker.retained("nb/#")
        #expect(all[bed.topic("battery/BAT0/level")] != nil && all[bed.topic("power/AC/online")] == nil, "\(all)")
        await bed.shutdown()
        #expect(try await broker.retained("nb/host-1/$online")["nb/host-1/$online"] == "false")
    }

    /// The broker answers before the sources publish: their first values are current values.
    @Test func aKeysFirstValueAfterTheFirstConnectionIsACurrentValue() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        let bed = try LinkBed(broker: broker, bus: bus)
        #expect(await bed.waitUntilRunning())
        #expect(await bed.waitUntilSettled())
        bus.publish("battery/BAT0/level", 0.5)
        #expect(await eventually { (try? await broker.retained(bed.everything).payload(bed.topic("battery/BAT0/level"))) != nil })
        let first = try #require(try await broker.retained(bed.everything).payload(bed.topic("battery/BAT0/level")))
        #expect(first.value == 0.5 && first.coalesced == 0, "\(first)")
        bus.publish("battery/BAT0/level", 0.49)
        #expect(await eventually { (try? await broker.retained(bed.everything).payload(bed.topic("battery/BAT0/level")))?.value == 0.49 })
        #expect(try await broker.retained(bed.everything).payload(bed.topic("battery/BAT0/level"))?.coalesced == 1)
        await bed.shutdown()
    }

    @Test func anOutageSendsOneMessagePerChangedKeyWithItsCount() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        for key in ["a", "b", "c"] { bus.publish(key, 0) }
        let bed = try LinkBed(broker: broker, bus: bus, config: "keepalive = 5\n")
        #expect(await bed.waitUntilRunning(), "\(bed.statuses.all)")
        #expect(await bed.waitUntilSettled())
        // MQTT 5 (mosquitto logs "p5"), with the session kept across the outage below.
        #expect(readFile(broker.log)?.contains("as notifybus-host-1 (p5, c0, k5)") == true, "\(readFile(broker.log) ?? "")")
        // A watcher with a persistent session: the broker queues for it what it misses.
        _ = try await broker.receive(bed.everything, session: "tap")

        broker.stop()
        #expect(await bed.statuses.wait { if case .unavailable(_)? = $0.last { true } else { false } })
        for n in 1...5 { bus.publish("a", .integer(Int64(n))) }
        for n in 1...3 { bus.publish("b", .integer(Int64(n))) }
        try await broker.start()
        #expect(await bed.waitUntilRunning(times: 2))
        #expect(await bed.waitUntilSettled())

        let received = try await broker.receive(bed.everything, session: "tap").filter { !$0.retained }
        let keys = received.map(\.topic).filter { !$0.hasSuffix("$online") }
        #expect(keys == [bed.topic("a"), bed.topic("b")], "\(received)")
        #expect(received.first { $0.topic == bed.topic("a") }?.decoded == MQTTPayload(
            value: 5, time: received.first { $0.topic == bed.topic("a") }?.decoded?.time ?? "", coalesced: 5))
        #expect(received.first { $0.topic == bed.topic("b") }?.decoded?.coalesced == 3)
        let retained = try await broker.retained(bed.everything)
        #expect(retained.payload(bed.topic("a"))?.value == 5)
        #expect(retained.payload(bed.topic("c"))?.value == 0)
        await bed.shutdown()
    }

    @Test func aBrokerThatLostItsStateGetsEveryValueAgain() async throws {
        let broker = try await MosquittoBroker(persistence: false)
        let bus = NotificationBus()
        for key in ["a", "b"] { bus.publish(key, 0) }
        let bed = try LinkBed(broker: broker, bus: bus)
        #expect(await bed.waitUntilSettled())
        broker.stop()
        #expect(await bed.statuses.wait { if case .unavailable(_)? = $0.last { true } else { false } })
        bus.publish("a", 1)
        bus.publish("a", 2)
        try await broker.start()
        #expect(await bed.waitUntilRunning(times: 2))
        #expect(await bed.waitUntilSettled())
        let retained = try await broker.retained(bed.everything)
        #expect(retained.payload(bed.topic("a"))?.value == 2)
        #expect(retained.payload(bed.topic("a"))?.coalesced == 2)
        #expect(retained.payload(bed.topic("b"))?.value == 0)
        #expect(retained.payload(bed.topic("b"))?.coalesced == 0)
        #expect(retained["nb/host-1/$online"] == "true")
        await bed.shutdown()
    }

    @Test func aBrokerThatSpeaksOnlyMQTT311GetsItAndEveryValueAfterARestart() async throws {
        let broker = try await AmqttBroker()
        let bus = NotificationBus()
        for key in ["a", "b"] { bus.publish(key, 0) }
        let bed = try LinkBed(broker: broker, bus: bus)
        // amqtt leaves an MQTT 5 CONNECT unanswered: after the connect timeout (10 s), 3.1.1.
        #expect(await bed.waitUntilSettled(timeout: .seconds(30)), "\(bed.statuses.all)")
        // The refusal of MQTT 5 is not a failure: one `running`, nothing unavailable.
        #expect(bed.statuses.all.allSatisfy { if case .unavailable = $0 { false } else { true } }, "\(bed.statuses.all)")
        let first = try await broker.retained(bed.everything)
        #expect(first.payload(bed.topic("a"))?.value == 0 && first["nb/host-1/$online"] == "true", "\(first)")

        // amqtt forgets everything when it stops: the link publishes every value again.
        broker.stop()
        #expect(await bed.statuses.wait { if case .unavailable(_)? = $0.last { true } else { false } })
        bus.publish("a", 1)
        bus.publish("a", 2)
        try await broker.start()
        #expect(await bed.waitUntilRunning(times: 2), "\(bed.statuses.all)")
        #expect(await bed.waitUntilSettled())
        let after = try await broker.retained(bed.everything)
        #expect(after.payload(bed.topic("a"))?.value == 2 && after.payload(bed.topic("a"))?.coalesced == 2, "\(after)")
        #expect(after.payload(bed.topic("b"))?.value == 0 && after.payload(bed.topic("b"))?.coalesced == 0)
        await bed.shutdown()
    }

    @Test func moreKeysChangedThanTheLimitDuringAnOutageSendsEveryValue() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        for key in 0..<12 { bus.publish("k\(key)", 0) }
        let bed = try LinkBed(broker: broker, bus: bus, limit: 8)
        #expect(await bed.waitUntilSettled())
        _ = try await broker.receive(bed.everything, session: "tap")
        broker.stop()
        #expect(await bed.statuses.wait { if case .unavailable(_)? = $0.last { true } else { false } })
        // Ten keys change, past the suspended subscription's limit of 8: it overflows, and the
        // resume sends every current value (the two unchanged ones too), nothing lost.
        for key in 0..<10 { bus.publish("k\(key)", 1) }
        try await broker.start()
        #expect(await bed.waitUntilRunning(times: 2))
        #expect(await bed.waitUntilSettled())
        let received = try await broker.receive(bed.everything, session: "tap").filter { !$0.retained && !$0.topic.hasSuffix("$online") }
        #expect(Set(received.map(\.topic)) == Set((0..<12).map { bed.topic("k\($0)") }), "\(received)")
        let retained = try await broker.retained(bed.everything)
        for key in 0..<12 { #expect(retained.payload(bed.topic("k\(key)"))?.value == (key < 10 ? 1 : 0)) }
        await bed.shutdown()
    }

    @Test func keysAreEscapedIntoTopics() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("odd/a+b/c#d/100%", "x")
        let bed = try LinkBed(broker: broker, bus: bus)
        #expect(await bed.waitUntilSettled())
        let retained = try await broker.retained(bed.everything)
        #expect(retained.payload("nb/host-1/odd/a%2Bb/c%23d/100%25")?.value == "x", "\(retained)")
        await bed.shutdown()
    }

    @Test func aPasswordBroker() async throws {
        let broker = try await MosquittoBroker(.password(user: "kiosk", password: "pass word"))
        let bus = NotificationBus()
        bus.publish("k", 1)
        let wrong = try LinkBed(broker: broker, bus: bus, hostID: "wrong", config: "username = kiosk\npassword = nope\n")
        #expect(await wrong.statuses.wait {
            $0.contains { if case .unavailable(let reason) = $0 { reason.lowercased().contains("not authori") } else { false } }
        }, "\(wrong.statuses.all)")
        await wrong.shutdown()
        let bed = try LinkBed(broker: broker, bus: bus, config: "username = kiosk\npassword = pass word\n")
        #expect(await bed.waitUntilSettled())
        #expect(try await broker.retained(bed.everything).payload(bed.topic("k"))?.value == 1)
        await bed.shutdown()
    }

    @Test func aTLSBroker() async throws {
        let broker = try await MosquittoBroker(.tls)
        let bus = NotificationBus()
        bus.publish("k", "secret")
        let bed = try LinkBed(broker: broker, bus: bus, config: "ca-file = \(broker.caFile)\n")
        #expect(await bed.waitUntilSettled(), "\(bed.statuses.all)")
        #expect(try await broker.retained(bed.everything).payload(bed.topic("k"))?.value == "secret")
        await bed.shutdown()
        // A link that does not trust the broker's CA does not connect, and says why.
        let untrusting = try LinkBed(broker: broker, bus: bus, hostID: "untrusting", config: "ca-file = /etc/ssl/certs/ca-certificates.crt\n")
        #expect(await untrusting.statuses.wait {
            $0.contains { if case .unavailable(let reason) = $0 { reason.contains("certificate verify failed") } else { false } }
        }, "\(untrusting.statuses.all)")
        let held = try await broker.retained("nb/#")
        #expect(held[bed.topic("k")] != nil && !held.keys.contains { $0.hasPrefix("nb/untrusting/") }, "\(held)")
        await untrusting.shutdown()
    }

    @Test func aBrokerThatRequiresAClientCertificate() async throws {
        let broker = try await MosquittoBroker(.clientCertificate)
        let bus = NotificationBus()
        bus.publish("k", "signed")
        let (cert, key) = broker.clientCertificate
        let bed = try LinkBed(broker: broker, bus: bus, config: "ca-file = \(broker.caFile)\ncert-file = \(cert)\nkey-file = \(key)\n")
        #expect(await bed.waitUntilSettled(), "\(bed.statuses.all)")
        #expect(try await broker.retained(bed.everything).payload(bed.topic("k"))?.value == "signed")
        await bed.shutdown()
        // Without one, the broker ends the handshake: the link says so and publishes nothing.
        let anonymous = try LinkBed(broker: broker, bus: bus, hostID: "anonymous", config: "ca-file = \(broker.caFile)\n")
        #expect(await anonymous.statuses.wait {
            $0.contains { if case .unavailable = $0 { true } else { false } }
        }, "\(anonymous.statuses.all)")
        let held = try await broker.retained("nb/#")
        #expect(held[bed.topic("k")] != nil && !held.keys.contains { $0.hasPrefix("nb/anonymous/") }, "\(held)")
        await anonymous.shutdown()
    }

    @Test func hostNamesAreLookedUpOffTheLoop() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("k", 1)
        let named = try LinkBed(broker: broker, bus: bus, url: "mqtt://localhost:\(broker.port)")
        #expect(await named.waitUntilSettled(), "\(named.statuses.all)")
        #expect(try await broker.retained(named.everything).payload(named.topic("k"))?.value == 1)
        await named.shutdown()
        let unknown = try LinkBed(broker: broker, bus: bus, hostID: "unknown", url: "mqtt://no-such-broker.invalid:\(broker.port)")
        #expect(await unknown.statuses.wait(timeout: .seconds(30)) {
            $0.contains { if case .unavailable(let reason) = $0 { reason.contains("cannot resolve") } else { false } }
        }, "\(unknown.statuses.all)")
        await unknown.shutdown()
    }
}
