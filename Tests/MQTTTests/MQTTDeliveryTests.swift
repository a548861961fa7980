import NotifyBus
import NotifyBusMQTT
import NotifyBusSources
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a broker restart cannot show: a publish lost on its way (a proxy between link and broker
/// that stops relaying, then resets both sides), and a broker that stops answering.
@Suite(.serialized) struct MQTTDeliveryTests {
    static let proxyScript: String = {
        let file = "\(#filePath)"
        return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures/tcp_proxy.py"
    }()

    @Test func aPublishNotAcknowledgedWhenTheConnectionDiedIsSentAgain() async throws {
        let broker = try await MosquittoBroker()
        let proxy = try ChildProcess(
            executable: "/usr/bin/python3", arguments: [Self.proxyScript, "\(broker.port)"],
            environment: ChildProcess.environment(with: [:]))
        let port = try #require(proxy.readLine(timeout: .seconds(10)))
        let bus = NotificationBus()
        bus.publish("k", 1)
        let bed = try LinkBed(broker: broker, bus: bus, url: "mqtt://127.0.0.1:\(port)")
        #expect(await bed.waitUntilSettled())
        #expect(try await broker.retained(bed.everything).payload(bed.topic("k"))?.value == 1)

        #expect(try proxy.request("drop") == "ok")
        bus.publish("k", 2)
        // The publish left the link and waits for its acknowledgement, which cannot come.
        #expect(await eventually { await bed.link.backlog()?.inflight == 1 })
        #expect(try proxy.request("reset") == "ok")
        #expect(await bed.waitUntilRunning(times: 2))
        #expect(await bed.waitUntilSettled())
        let retained = try await broker.retained(bed.everything).payload(bed.topic("k"))
        #expect(retained?.value == 2 && retained?.coalesced == 1)
        await bed.shutdown()
    }

    @Test func aBrokerThatStopsAnsweringIsNoticedByTheKeepalive() async throws {
        let broker = try await MosquittoBroker()
        let bus = NotificationBus()
        bus.publish("k", 1)
        let bed = try LinkBed(broker: broker, bus: bus, config: "keepalive = 5\n")
        #expect(await bed.waitUntilSettled())
        let pid = try #require(broker.pid)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        // One keepalive (and a second) to send PINGREQ, one more for its answer.
        #expect(await bed.statuses.wait(timeout: .seconds(20)) {
            if case .unavailable(let reason)? = $0.last { reason.contains("keepalive") } else { false }
        }, "\(bed.statuses.all)")
        kill(pid, SIGCONT)
        bus.publish("k", 2)
        #expect(await bed.waitUntilRunning(times: 2, timeout: .seconds(30)))
        #expect(await bed.waitUntilSettled())
        #expect(try await broker.retained(bed.everything).payload(bed.topic("k"))?.value == 2)
        await bed.shutdown()
    }

    @Test func aBrokersShorterServerKeepAliveIsKept() async throws {
        // The broker tells MQTT 5 clients to ping every 10 s (its least) whatever they asked (60 s
        // here); one that does not is disconnected after 15 s.
        let broker = try await MosquittoBroker(settings: ["max_keepalive 10"])
        let bus = NotificationBus()
        bus.publish("k", 1)
        let bed = try LinkBed(broker: broker, bus: bus, config: "keepalive = 60\n")
        #expect(await bed.waitUntilSettled())
        try await Task.sleep(for: .seconds(17))
        #expect(bed.statuses.all.filter { $0 == .running }.count == 1, "\(bed.statuses.all)")
        #expect(readFile(broker.log)?.contains("Received PINGREQ from notifybus-host-1") == true)
        await bed.shutdown()
    }
}
