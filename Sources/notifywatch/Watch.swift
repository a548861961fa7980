#if canImport(Glibc)
import Glibc
#endif
public import ArgumentParser
import EpollLoop
import Logging
import NotifyBus
import NotifyBusCommandLine
import NotifyBusLog
import NotifyBusMQTT
import NotifyBusProtocol
import NotifyBusSources
import SystemSupport

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch the system's notifications live (the default command).",
        discussion: """
            Starts every source that can run here, prints a `source` line for each, then the
            current value of every key, then each notification as it comes.

            Suspend and resume the watcher as an app would be:
              kill -USR1 PID     suspend: notifications are held, collapsed per key
              kill -USR2 PID     resume: one notification per key that changed, with ×N
              Ctrl-Z, then fg    suspend and stop; on fg the sources re-read, then resume
            Ctrl-C or SIGTERM ends it (exit status 0).

            Examples:
              notifywatch
              notifywatch 'battery/**' orientation --policy changed
              notifywatch --json | jq -c 'select(.type == "notification")'
              notifywatch --record session.jsonl      (then: notifywatch replay session.jsonl)
              notifywatch --source power --no-initial
              notifywatch --daemon 'battery/**'     (through notifybusd)
              notifywatch --mqtt mqtt://broker '*/battery/**'   (a fleet, from notifybusd --mqtt)
            """
    )

    @Argument(help: "Key patterns to watch (`*` one segment, `**` any number); default: everything.")
    var patterns: [String] = []

    @Flag(help: "Print one JSON object per line (specification: notifywatch output), flushed line by line.")
    var json = false

    @Option(help: "What a resume delivers: latest, changed, all or drop.")
    var policy: DeliveryPolicy = .latest

    @Option(help: "The most keys (events under --policy all) held while suspended; past it, a resync.")
    var limit: Int = NotificationBus.defaultLimit

    @Flag(help: "Do not print the current values at start.")
    var noInitial = false

    @OptionGroup var sources: SourceSelectionOptions<SourceCatalog>

    @OptionGroup var buses: BusAddressOptions<SourceCatalog>

    @Option(help: "Also write an event log of everything published, and the suspends and resumes, to FILE.")
    var record: String?

    @Flag(help: """
        Watch through notifybusd (org.notifybus.Bus1 on the session bus; the bus starts it where \
        it is installed) instead of starting the sources here; it holds notifications while this \
        process is frozen or stopped.
        """)
    var daemon = false

    @OptionGroup(title: "A fleet through MQTT")
    var fleet: FleetOptions

    @Flag(help: "Exit with status 69 instead of watching when no source is available.")
    var exitIfUnavailable = false

    @Option(help: "Colour the human output: auto (on a terminal), always, never.")
    var color: Replay.ColorChoice = .auto

    @Option(help: """
        What the sources log on standard error: trace, debug (also status changes, and the \
        daemons not installed here), info, notice, warning (what they skip: wrong types, \
        malformed signals), error, critical.
        """)
    var logLevel: Logger.Level = .warning

    /// The watcher's name in output and recordings.
    static let subscriberName = "notifywatch"

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 or more") }
        if daemon, !(1...BusInterface.Limits.maximumLimit).contains(limit) {
            throw ValidationError("--limit with --daemon must be 1 to \(BusInterface.Limits.maximumLimit), what notifybusd holds at most")
        }
        if daemon, record != nil {
            throw ValidationError("--record cannot go with --daemon: the daemon's subscriber never sees the raw events")
        }
        if record == "-" {
            throw ValidationError("--record needs a file: standard output carries what is watched")
        }
        do {
            if try fleet.fleet(patterns: patterns) != nil {
                // What applies to this machine's sources and bus only: a fleet watch holds one
                // line per host and key (policy latest) and always prints the current values.
                let local: [(String, Bool)] = [
                    ("--daemon", daemon), ("--record", record != nil), ("--source", !sources.onlySources.isEmpty),
                    ("--no-source", !sources.exceptSources.isEmpty), ("--system-bus", buses.systemBus != nil),
                    ("--session-bus", buses.sessionBus != nil), ("--policy", policy != .latest),
                    ("--limit", limit != NotificationBus.defaultLimit), ("--no-initial", noInitial),
                    ("--exit-if-unavailable", exitIfUnavailable),
                ]
                if let (name, _) = local.first(where: { $0.1 }) {
                    throw ValidationError("--mqtt cannot go with \(name): it applies to this machine's sources and bus")
                }
            }
        } catch let error as MQTTConfigurationError {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        let names = self.sources.selected
        let bus = NotificationBus()
        let origin = WallTime.now()
        let useColor = color == .always
            || (color == .auto && isatty(STDOUT_FILENO) == 1 && !Posix.hasEnvironment("NO_COLOR"))
        let output = LiveOutput(json: json, color: useColor, subscriber: Self.subscriberName, origin: origin)

        let recorder: BusRecorder?
        if let record {
            do {
                let writer = try EventLogWriter(path: record, metadata: [
                    "recorded": .string(LocalTime(origin).rfc3339),
                    "host": .string(HostName.current),
                    "sources": .array(names.map { .string($0) }),
                ])
                recorder = BusRecorder(bus: bus, writer: writer)
            } catch {
                printError(error.description)
                throw ExitCode(73)
            }
        } else {
            recorder = nil
        }

        let loop = try EventLoopThread(name: "notifywatch")
        let listener = try SignalListener(JobControlDriver.signals, loop: loop)
        if let (broker, prefix, selections) = try fleet.fleet(patterns: patterns) {
            let output = FleetOutput(json: json, color: useColor, origin: origin)
            let code = await FleetWatch(broker: broker, prefix: prefix, selections: selections)
                .run(output: output, loop: loop, listener: listener)
            await loop.shutdown()
            if code != 0 { throw ExitCode(code) }
            return
        }
        if daemon {
            let watch = DaemonWatch(
                patterns: patterns.isEmpty ? [.all] : patterns.map { KeyPattern($0) }, policy: policy, limit: limit,
                initial: noInitial ? .none : .current, sessionBus: buses.sessionBus, exitIfUnavailable: exitIfUnavailable)
            let code = await watch.run(output: output, listener: listener)
            await loop.shutdown()
            if code != 0 { throw ExitCode(code) }
            return
        }
        // What the sources skip (wrong types, malformed signals), on stderr as it happens.
        let logLevel = self.logLevel
        let logger = Logger(label: "notifywatch.sources") { _ in StandardErrorLogHandler(program: "notifywatch", logLevel: logLevel) }
        let sources = SourceCatalog.make(names, bus: bus, buses: buses, logger: logger)

        let exitCode: Int32 = await withTaskGroup(of: Void.self) { group in
            for source in sources {
                group.addTask {
                    do { try await source.run() } catch {
                        output.source(source.name, .failed(reason: "\(error)"), at: bus.clock.now())
                    }
                }
            }
            // Each source's first status, then the current values, then live notifications.
            // The timeout waits on this loop's timer, which is cancelled when every source has
            // settled: a cancelled Task.sleep would still wake its executor at the deadline.
            let statuses = await sources.firstStatuses(timeout: .seconds(5)) { await loop.sleep(for: $0) }
            for (source, status) in zip(sources, statuses) {
                output.source(source.name, status, at: bus.clock.now())
            }
            if !statuses.contains(.running) {
                let why = zip(sources, statuses).map { "\($0.name): \($1.reason ?? $1.name)" }.joined(separator: "; ")
                let what = sources.isEmpty ? "no source was chosen" : "no source is available here (\(why))"
                if exitIfUnavailable {
                    printError(what)
                    group.cancelAll()
                    return 69
                }
                printError("\(what); watching anyway (--exit-if-unavailable exits instead)")
            }
            // Then every change: settled ones only (a source restarting shows as unavailable,
            // then running, without its connecting and claiming in between).
            for (source, printed) in zip(sources, statuses) {
                group.addTask {
                    var last = printed
                    for await status in source.statusUpdates() where status.isSettled && status != last {
                        output.source(source.name, status, at: bus.clock.now(), current: { source.status })
                        last = status
                    }
                }
            }

            let jobs = JobControlDriver(rereadsOnContinue: true)
            let watcher = bus.subscribe(
                patterns.isEmpty ? [.all] : patterns.map { KeyPattern($0) }, policy: policy, limit: limit,
                initial: noInitial ? .none : .current, name: Self.subscriberName
            ) { event in
                output.event(event)
                if case .suspended = event { jobs.suspendedLinePrinted() }
            }

            await jobs.run(signals: listener.signals) { request in
                switch request {
                case .suspend: watcher.suspend()
                case .resume: watcher.resume()
                case .reread:
                    // Whatever stopped us (Ctrl-Z, or SIGSTOP from outside), the sources may have
                    // missed changes: re-read first, so the flush carries them.
                    for source in sources { await source.reread() }
                }
            }
            watcher.cancel()
            group.cancelAll()
            return 0
        }
        recorder?.finish()
        await loop.shutdown()
        if let failure = recorder?.failure {
            printError("the recording is incomplete: \(failure)")
            throw ExitCode(74)
        }
        if exitCode != 0 { throw ExitCode(exitCode) }
    }
}

extension DeliveryPolicy: ExpressibleByArgument {}

extension Logger.Level: @retroactive ExpressibleByArgument {}
