#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import DBus
import Logging
import NIOCore
import NIOPosix
import NotifyBusDaemon
import NotifyBusSources
import ServiceLifecycle
import UnixSignals

/// The entry point: Swift concurrency's global executor becomes SwiftNIO's event loops before
/// anything runs, so an idle daemon wakes for nothing (the default executor on Linux re-arms a
/// one-second libdispatch timer for as long as the program runs).
@main
enum Main {
    static func main() async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        await NotifyBusd.main()
    }
}

struct NotifyBusd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifybusd",
        abstract: "The notification bus as a D-Bus service (org.notifybus.Bus1 on the session bus).",
        discussion: """
            Runs the sources that can run here and serves org.notifybus.Bus1: apps in any language
            subscribe over D-Bus, and the daemon holds their notifications, collapsed per key, while
            they are suspended, frozen by the cgroup v2 freezer or stopped (CONTRACT.md §5).
            SIGINT and SIGTERM release everything and exit 0; exit status 1 when the name is taken.
            """)

    @Option(name: .customLong("session-bus"), help: "The bus to serve on (default: $DBUS_SESSION_BUS_ADDRESS).")
    var sessionBus: String?

    @Option(name: .customLong("system-bus"), help: "Where the system sources connect (default: $DBUS_SYSTEM_BUS_ADDRESS).")
    var systemBus: String?

    @Option(name: .customLong("source"), help: "Run only this source (repeatable): \(SystemSources.names.joined(separator: ", ")).")
    var onlySources: [String] = []

    @Option(name: .customLong("no-source"), help: "Do not run this source (repeatable).")
    var exceptSources: [String] = []

    @Option(name: .customLong("max-held"), help: "The most entries held for all suspended subscriptions together.")
    var maxHeld: Int = 1_048_576

    @Option(help: "What to log on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    func validate() throws {
        for name in onlySources + exceptSources where !SystemSources.names.contains(name) {
            throw ValidationError("unknown source \"\(name)\" (the sources are: \(SystemSources.names.joined(separator: ", ")))")
        }
        if maxHeld < 1 { throw ValidationError("--max-held must be 1 or more") }
    }

    func run() async throws {
        let level = logLevel
        let logger = Logger(label: "notifybusd") { _ in StandardErrorLogHandler(program: "notifybusd", logLevel: level) }
        let daemon = NotifyBusDaemon(configuration: .init(
            sessionBus: sessionBus.map(DBusAddress.address) ?? .session,
            sources: SystemSources.Options(
                systemBus: systemBus.map(SourceBusAddress.address) ?? .system,
                sessionBus: sessionBus.map(SourceBusAddress.address) ?? .session,
                only: onlySources, except: exceptSources, logger: logger),
            maximumHeld: maxHeld, logger: logger))
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: daemon)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let failure as NotifyBusDaemon.Failure {
            StandardErrorLogHandler.print("notifybusd: \(failure)")
            throw ExitCode(1)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
