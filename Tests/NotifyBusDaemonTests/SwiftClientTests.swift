import DBus
import NotifyBus
import NotifyBusClient
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `NotifyBusClient`: the same `SubscriptionEvent`s through notifybusd as from an in-process bus.
@Suite("The Swift client of notifybusd", .serialized)
struct SwiftClientTests {
    @Test func subscriptionsYieldTheEventsAnInProcessBusWould() async throws {
        let bed = try await DaemonBed()
        let client = try await NotifyBusClient(address: bed.session.dbusAddress)
        #expect(await client.isDaemonRunning())
        let sources = try await client.sources()
        #expect(sources.map(\.name) == ["network"] && sources.map(\.status) == ["running"] && sources.map(\.reason) == [""])
        #expect(try await client.value(forKey: "network/connectivity") == "full")
        #expect(try await client.value(forKey: "no/such/key") == nil)
        #expect(try await client.snapshot(matching: ["network/*"]).map(\.key).contains("network/connectivity"))

        let subscription = try await client.subscribe(["network/connectivity"], policy: .latest, initial: .current)
        var events = subscription.makeAsyncIterator()
        let initial = try #require(await events.next()?.notification)
        #expect(initial.key == "network/connectivity" && initial.value == "full")
        #expect(initial.kind == .initial && initial.coalesced == 0)

        try await bed.setConnectivity(1)
        let live = try #require(await events.next()?.notification)
        #expect(live.value == "none" && live.previous == "full" && live.kind == .live && live.coalesced == 1)
        #expect(live.time > .zero && live.time < .seconds(60))

        subscription.suspend()
        guard case .suspended? = await events.next() else {
            Issue.record("no suspended mark")
            return
        }
        try await bed.setConnectivity(2)
        try await bed.setConnectivity(3)
        try await Task.sleep(for: .milliseconds(200))
        subscription.resume()
        guard case .resumed(_, let flushed)? = await events.next() else {
            Issue.record("no resumed mark")
            return
        }
        #expect(flushed == 1)
        let flushedNotification = try #require(await events.next()?.notification)
        #expect(flushedNotification.value == "limited" && flushedNotification.coalesced == 2)
        #expect(flushedNotification.kind == .flushed && flushedNotification.previous == "none")
        // The times of the first and last events it stands for come from the daemon.
        #expect(flushedNotification.firstEventTime < flushedNotification.lastEventTime)
        #expect(flushedNotification.lastEventTime < flushedNotification.time)

        // Resync on request: a mark, then every current value.
        subscription.resync()
        guard case .resync(_, .requested)? = await events.next() else {
            Issue.record("no resync mark")
            return
        }
        let current = try #require(await events.next()?.notification)
        #expect(current.value == "limited" && current.kind == .resync && current.coalesced == 0)

        subscription.cancel()
        #expect(await events.next() == nil)
        await client.close()
    }

    @Test func theDaemonLeavingEndsTheSubscriptions() async throws {
        let bed = try await DaemonBed()
        let client = try await NotifyBusClient(address: bed.session.dbusAddress)
        let subscription = try await client.subscribe(["network/**"])
        var events = subscription.makeAsyncIterator()
        bed.daemon.terminate(signal: SIGTERM)
        #expect(await events.next() == nil)
        await client.close()
    }
}
