#if canImport(Glibc)
import Glibc
#endif
public import ArgumentParser
import EpollLoop
import Logging
import LoopExecutor
import NotifyBusCommandLine
import NotifyBusDaemon
import NotifyBusLifecycle
import NotifyBusMQTT
import NotifyBusSources
import ServiceLifecycle
import SystemSupport

/// The entry point: Swift concurrency's global executor, `Task.sleep` included, becomes the
/// project's own epoll loop threads before anything runs, so an idle daemon wakes for nothing (the
/// default executor on Linux re-arms a one-second libdispatch timer for as long as the program runs).
@main
enum Main {
    static func main() async {
        LoopExecutor.install()
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
            they are suspended, frozen by the cgroup v2 freezer or stopped. Every client is held to
            bounds (subscriptions, patterns, held entries, call sizes), so none can stall or swell
            the daemon for the others. With --freeze-background it also freezes the cgroups of apps
            whose windows stay in the background (sway's IPC, the wlr foreign-toplevel protocol, or
            on Plasma KDE's org_kde_plasma_window_management, which KWin offers only to a program
            named by the Exec= of an installed desktop file listing it in X-KDE-Wayland-Interfaces:
            the package installs one for notifybusd) and thaws them the moment one is focused,
            publishing app/<app-id>/lifecycle; a method call or unicast signal to a frozen app's
            connection (or someone else's thaw) thaws it too, for --freeze-wake-grace seconds, and
            an app may ask for --freeze-task-limit seconds in the background
            (org.notifybus.Lifecycle1 BeginBackgroundTask); every freeze is listed in
            $XDG_RUNTIME_DIR/notifybus/frozen first, and each start (and --thaw-all) thaws what is
            listed. SIGINT and SIGTERM thaw and release everything and exit 0; exit status 1 when
            the name is taken, 64 for a malformed option or configuration file.
            """)

    @OptionGroup var buses: BusAddressOptions<Help>

    @OptionGroup var sources: SourceSelectionOptions<Help>

    @Option(name: .customLong("max-held"), help: "The most entries held for all suspended subscriptions together.")
    var maxHeld: Int = 1_048_576

    @Option(name: .customLong("max-subscriptions"), help: "The most subscriptions of all clients together.")
    var maxSubscriptions: Int = 4096

    @Option(help: "What to log on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .notice

    @OptionGroup(title: "MQTT")
    var mqtt: MQTTOptions

    @OptionGroup(title: "Background apps")
    var lifecycle: LifecycleOptions

    /// What notifybusd's help says of its sources and buses.
    enum Help: SourceSelectionHelp, BusAddressHelp {
        /// Every source name `--source` and `--no-source` take: the sources', and the lifecycle's.
        static let sourceNames = SystemSources.names + [LifecycleSource.sourceName]
        static let systemBus = "Where the system sources connect (default: $DBUS_SYSTEM_BUS_ADDRESS)."
        static let sessionBus = "The bus to serve on (default: $DBUS_SESSION_BUS_ADDRESS)."
    }

    func validate() throws {
        if maxHeld < 1 { throw ValidationError("--max-held must be 1 or more") }
        if maxSubscriptions < 1 { throw ValidationError("--max-subscriptions must be 1 or more") }
    }

    func run() async throws {
        let level = logLevel
        let logger = Logger(label: "notifybusd") { _ in StandardErrorLogHandler(program: "notifybusd", logLevel: level) }
        // What a crash or SIGKILL of an earlier run left frozen is thawed first, with or without
        // --freeze-background.
        let leftovers = LifecycleSource.thawLeftovers()
        for (group, reason) in leftovers { StandardErrorLogHandler.print("notifybusd: cannot thaw \(group): \(reason)") }
        if lifecycle.thawAll { throw ExitCode(leftovers.isEmpty ? 0 : 1) }
        raiseDescriptorLimit(logger: logger)
        // A large call (up to what the bus passes, refused unread past 128 KiB) or reply is a
        // mapping of its own, given back when freed: receiving one peaks at twice its size.
        HeapMemory.mapBlocks(ofAtLeast: 128 << 10)
        let mqttLink = try mqtt.configuration()
        let lifecycleConfiguration = sources.selects(LifecycleSource.sourceName) ? try lifecycle.configuration() : nil
        let daemon = NotifyBusDaemon(configuration: .init(
            sessionBus: buses.session,
            sources: SystemSources.Options(
                systemBus: buses.system, sessionBus: buses.session,
                only: sources.onlySources, except: sources.exceptSources, logger: logger),
            maximumHeld: maxHeld, maximumSubscriptions: maxSubscriptions, logger: logger,
            mqtt: mqttLink, lifecycle: lifecycleConfiguration))
        // SIGINT and SIGTERM begin graceful shutdown; the listener's loop wakes only for them.
        let signalLoop = try EventLoopThread(name: "notifybusd-sig")
        let signals = try SignalListener([SIGINT, SIGTERM], loop: signalLoop)
        let group = ServiceGroup(configuration: .init(services: [.init(service: daemon)], logger: logger))
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    for await _ in signals.signals {
                        await group.triggerGracefulShutdown()
                    }
                }
                try await group.run()
                tasks.cancelAll()
            }
        } catch {
            await signalLoop.shutdown()
            guard let failure = error as? NotifyBusDaemon.Failure else { throw error }
            StandardErrorLogHandler.print("notifybusd: \(failure)")
            throw ExitCode(1)
        }
        await signalLoop.shutdown()
    }
}

/// Raises the soft limit of open files to the hard limit: every followed cgroup is an inotify
/// watch and every source a descriptor or more, and the soft limit (often 1,024) is a bound no
/// client should be able to reach for the others.
private func raiseDescriptorLimit(logger: Logger) {
    var limit = rlimit()
    guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return }
    guard limit.rlim_cur < limit.rlim_max else { return }
    let soft = limit.rlim_cur
    limit.rlim_cur = limit.rlim_max
    if setrlimit(RLIMIT_NOFILE_VALUE, &limit) != 0 {
        logger.warning("cannot raise the limit of open files from \(soft) to \(limit.rlim_max): errno \(errno)")
    }
}

/// `RLIMIT_NOFILE` as `getrlimit` and `setrlimit` take it (an enum type in Glibc's import).
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

extension Logger.Level: @retroactive ExpressibleByArgument {}
