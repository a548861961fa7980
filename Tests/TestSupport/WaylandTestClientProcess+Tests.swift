// The tests' own Wayland client is the package's `WaylandTestClient`, built beside the test bundle.
extension WaylandTestClientProcess {
    /// The package's `WaylandTestClient`, built beside the test bundle.
    public static var testExecutable: String { Paths.executable("WaylandTestClient") }

    /// Starts the package's `WaylandTestClient`; see `init(executable:environment:log:timeout:)`.
    public convenience init(environment: [String: String], log: String, timeout: Duration = patience) throws {
        try self.init(executable: Self.testExecutable, environment: environment, log: log, timeout: timeout)
    }
}

extension HeadlessPhoc {
    /// Starts phoc with the package's `WaylandTestClient` as the bed's client; see
    /// `init(testClient:timeout:)`.
    public convenience init(timeout: Duration = patience) async throws {
        try await self.init(testClient: WaylandTestClientProcess.testExecutable, timeout: timeout)
    }
}
