import Logging
import NotifyBus
import NotifyBusSources
import ServiceLifecycle
import Testing

@Suite("PowerSupplySource as a Service")
struct PowerSupplyServiceTests {
    /// In this process (no umockdev): whatever this machine has, the source settles in a
    /// ServiceGroup and its `run()` returns on graceful shutdown, stopping the loop it started.
    @Test func runsInAServiceGroupAndEndsOnGracefulShutdown() async throws {
        let bus = NotificationBus()
        let source = PowerSupplySource(bus: bus, configuration: .init(rereadInterval: nil))
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: source)], logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }))
        let updates = source.statusUpdates()
        let run = Task { try await group.run() }
        var settled: SourceStatus?
        for await status in updates where status.isSettled {
            settled = status
            break
        }
        #expect(source.loop.isRunning)
        await group.triggerGracefulShutdown()
        try await run.value
        #expect(["running", "unavailable", "failed"].contains(settled?.name ?? ""))
        #expect(!source.loop.isRunning)
        await source.reread()  // not running: returns at once
    }
}
