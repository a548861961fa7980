import DBus
import NotifyBus
import NotifyBusDaemon
import NotifyBusSources
import TestSupport
import Testing

/// What the daemon keeps for its clients, counted inside it (the daemon in this process, on a
/// private session bus, its network source on a private system bus): a subscribe/cancel loop,
/// and clients that leave with subscriptions and calls under way, leave every count where it was.
@Suite("notifybusd leaves nothing behind", .serialized)
struct DaemonCensusTests {
    let session: PrivateBus
    let system: PrivateBus
    let network: MockService
    let daemon: NotifyBusDaemon
    let task: Task<Void, any Error>

    init() async throws {
        session = try PrivateBus(.session)
        system = try PrivateBus(.system)
        network = try await MockService(bus: system, template: "networkmanager", name: "org.freedesktop.NetworkManager")
        daemon = NotifyBusDaemon(configuration: .init(
            sessionBus: session.dbusAddress,
            sources: SystemSources.Options(
                systemBus: .address(system.address), sessionBus: .address(session.address), only: ["network"])))
        let daemon = self.daemon
        task = Task { try await daemon.run() }
        _ = try await session.waitForOwner(of: "org.notifybus.Bus1")
    }

    func stopDaemon() async throws {
        task.cancel()
        try await task.value
    }

    /// The census once the loop has handled everything sent before.
    func census(of client: DBusClient) async throws -> NotifyBusDaemon.Census {
        _ = try await client.property(destination: busName, path: busPath, interface: busInterface, name: "Version")
        return try #require(await daemon.census())
    }

    @Test func aSubscribeCancelLoopLeavesEveryCountWhereItWas() async throws {
        let client = try DBusClient(address: session.dbusAddress)
        try await client.waitUntilConnected()
        let before = try await census(of: client)
        #expect(before.subscriptions == 0 && before.owners == 0 && before.routes == 0)
        for round in 0..<300 {
            let reply = try await client.call(
                destination: busName, path: busPath, interface: busInterface, member: "Subscribe",
                arguments: [.strings(round % 2 == 0 ? ["network/**"] : ["**", "network/*"]), .vardict([("initial", .string("current"))])])
            let path = try ObjectPath(validating: reply.first?.stringValue ?? "")
            if round == 0 {
                let during = try await census(of: client)
                #expect(during.subscriptions == 1 && during.owners == 1 && during.followings == 1)
                #expect(during.applications == 1 && during.busSubscribers == 1 && during.routes >= 2)
            }
            _ = try await client.call(destination: busName, path: path, interface: subscriptionInterface, member: "Cancel")
        }
        let after = try await census(of: client)
        #expect(after == before, "before \(before), after \(after)")
        await client.close()
        try await stopDaemon()
    }

    @Test func clientsThatLeaveMidwayLeaveNothing() async throws {
        let watcher = try DBusClient(address: session.dbusAddress)
        try await watcher.waitUntilConnected()
        let before = try await census(of: watcher)
        for _ in 0..<20 {
            let client = try DBusClient(address: session.dbusAddress)
            try await client.waitUntilConnected()
            for index in 0..<5 {
                let reply = try await client.call(
                    destination: busName, path: busPath, interface: busInterface, member: "Subscribe",
                    arguments: [.strings(["network/**"]), .vardict([])])
                if index == 0, let path = reply.first?.stringValue.flatMap(ObjectPath.init(rawValue:)) {
                    client.send(destination: busName, path: path, interface: subscriptionInterface, member: "Suspend")
                }
            }
            // Calls still under way, some waiting for the caller to be identified, as it leaves.
            for _ in 0..<10 {
                client.send(
                    destination: busName, path: busPath, interface: busInterface, member: "Subscribe",
                    arguments: [.strings(["**"]), .vardict([])])
            }
            await client.close()
        }
        try await setConnectivity(1)
        let settled = await eventually(timeout: .seconds(10)) {
            (try? await census(of: watcher)).map { $0 == before } ?? false
        }
        let after = try await census(of: watcher)
        #expect(settled, "before \(before), after \(after)")
        await watcher.close()
        try await stopDaemon()
    }

    private func setConnectivity(_ state: UInt32) async throws {
        let control = try DBusClient(address: system.dbusAddress)
        try await control.waitUntilConnected()
        _ = try await control.call(
            destination: "org.freedesktop.NetworkManager", path: "/org/freedesktop", interface: "org.freedesktop.DBus.Mock",
            member: "SetConnectivity", arguments: [.uint32(state)])
        await control.close()
    }
}
