import TestSupport
import Logging
import NotifyBus
import NotifyBusSources
import ServiceLifecycle
import Testing

/// The sources as swift-service-lifecycle services, made with the one call.
@Suite("Sources in a ServiceGroup")
struct SourceServiceTests {
    @Test func everySourceRunsInAServiceGroupOnOneLoopAndEndsOnGracefulShutdown() async throws {
        let bus = try PrivateBus()
        let notifications = NotificationBus()
        let log = LogRecorder()
        let sources = SystemSources.all(bus: notifications, options: .init(
            systemBus: bus.dbusAddress, sessionBus: bus.dbusAddress, logger: log.logger))
        #expect(sources.map(\.name) == ["power", "sensors", "locale", "settings", "time", "display", "power-profile", "network", "login", "memory", "thermal"])
        let loops = sources.compactMap { source -> SourceLoop? in
            switch source {
            case let source as PowerSupplySource: source.loop
            case let source as SensorProxySource: source.loop
            case let source as LocaleSource: source.loop
            case let source as PortalSettingsSource: source.loop
            case let source as TimeSource: source.loop
            case let source as DisplaySource: source.loop
            case let source as PowerProfileSource: source.loop
            case let source as NetworkSource: source.loop
            case let source as LoginSource: source.loop
            case let source as MemoryPressureSource: source.loop
            case let source as ThermalSource: source.loop
            default: nil
            }
        }
        #expect(loops.count == 11)
        let loop = try #require(loops.first)
        #expect(loops.allSatisfy { $0 === loop })
        #expect(!loop.isRunning)  // it starts with the first source

        let group = ServiceGroup(configuration: .init(
            services: sources.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }))
        let run = Task { try await group.run() }
        // Every source settles: no service answers on this bus, so none is running, but each says
        // why. (Patient: the whole suite at once can keep the group's task waiting for a while.)
        #expect(await eventually(timeout: .seconds(60)) { sources.allSatisfy(\.status.isSettled) }, "\(sources.map(\.status))")
        #expect(loop.isRunning)
        #expect(sources.first { $0.name == "sensors" }?.status.name == "unavailable")

        await group.triggerGracefulShutdown()
        try await run.value
        // Every run() returned: the status streams end, and the shared loop stopped with the last.
        for source in sources {
            for await _ in source.statusUpdates() {}
        }
        #expect(!loop.isRunning)
        #expect(log.all.contains { $0.metadata["source"] == "settings" })
        // A bus without the daemons is a normal machine: the D-Bus sources say so in their
        // statuses and at debug, never at warning (the udev, time and locale sources read this
        // machine's devices and files, which the other suites cover).
        let daemonless = ["sensors", "settings", "power-profile", "network", "login", "thermal"]
        let warned = log.all.filter { entry in
            entry.level >= .warning && daemonless.contains { entry.metadata["source"] == .string($0) }
        }
        #expect(warned.isEmpty, "\(warned.map(\.message))")
        // Options choose the sources.
        let some = SystemSources.all(bus: notifications, options: .init(only: ["locale", "power"], except: ["power"]))
        #expect(some.map(\.name) == ["locale"])
    }
}
