public import DBus
public import Harness

extension PrivateBus {
    /// A private bus of `kind` started, and a client of it once connected: the bed of a source's
    /// tests against python-dbusmock.
    public static func startedWithClient(_ kind: Kind = .system) async throws -> (PrivateBus, DBusClient) {
        let bus = try PrivateBus(kind)
        let client = try DBusClient(address: bus.dbusAddress)
        try await client.waitUntilConnected()
        return (bus, client)
    }
}
