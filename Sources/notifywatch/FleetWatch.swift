#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import EpollLoop
import NotifyBus
import NotifyBusCommandLine
import NotifyBusLog
import NotifyBusMQTT
import Synchronization
import SystemSupport

/// `notifywatch --mqtt URL [--mqtt-config FILE] [--mqtt-prefix P] [HOST/PATTERN...]`.
struct FleetOptions: ParsableArguments {
    @OptionGroup var broker: MQTTBrokerOptions<Help>

    /// What notifywatch's help says of the broker options.
    enum Help: MQTTBrokerOptionsHelp {
        static let url =
            "Watch a fleet through this MQTT broker (mqtt://HOST[:PORT] or mqtts://…) instead; the patterns are then HOST/PATTERN (HOST may be *)."
        static let configFile =
            "With --mqtt: a file of key = value lines (username, password, ca-file, cert-file, key-file, keepalive, client-id)."
        static let prefix = "With --mqtt: the first topic levels (default: notifybus)."
    }

    /// The broker settings and selections, or `nil` without `--mqtt`.
    func fleet(patterns: [String]) throws(MQTTConfigurationError) -> (MQTTBrokerSettings, String, [FleetSelection])? {
        guard let (broker, prefix) = try broker.settings() else { return nil }
        var selections: [FleetSelection] = []
        for pattern in patterns { selections.append(try FleetSelection(parsing: pattern)) }
        return (broker, prefix, selections.isEmpty ? [.everything] : selections)
    }
}

/// Watches a fleet until SIGINT or SIGTERM: every host's current values (the retained
/// messages), then each message as it comes, and the hosts' availability as `source` lines
/// named `host:<id>` (specification: Publishing a fleet to MQTT). SIGUSR1 and SIGUSR2, Ctrl-Z and
/// fg suspend and resume it as any live watching (`JobControl`; `FleetHold` holds the messages).
struct FleetWatch {
    let broker: MQTTBrokerSettings
    let prefix: String
    let selections: [FleetSelection]

    func run(output: FleetOutput, loop: EventLoopThread, listener: SignalListener) async -> Int32 {
        let watcher = MQTTFleetWatcher(broker: broker, prefix: prefix, selections: selections, loop: loop)
        do {
            try watcher.start { event in output.print(event) }
        } catch {
            printError("cannot start watching: \(error)")
            return 70
        }
        let jobs = JobControlDriver(rereadsOnContinue: false)
        await jobs.run(signals: listener.signals) { request in
            switch request {
            case .suspend: if output.suspend() { jobs.suspendedLinePrinted() }
            case .resume: output.resume()
            case .reread: break
            }
        }
        await watcher.stop()
        return 0
    }
}

/// The lines of a fleet watch: the specification's (notifywatch output), each with a `host` (`subscriber` is `mqtt`),
/// or human columns with a host column; what a suspension holds, and its flush.
final class FleetOutput: Sendable {
    static let subscriber = "mqtt"
    let json: Bool
    private let human: HumanFormat
    private let start = ContinuousClock.now
    /// The suspension and standard output, under one lock: lines leave in the order of the
    /// changes that made them.
    private let state = Mutex((hold: FleetHold(), out: OutputStream(fd: STDOUT_FILENO, lineBuffered: true)))

    init(json: Bool, color: Bool, origin: WallTime) {
        self.json = json
        var human = HumanFormat(color: color, showSubscriber: false, origin: origin)
        human.keyWidth = 24
        self.human = human
    }

    func print(_ event: FleetEvent) { apply { $0.receive(event) } }

    /// Suspends: the `suspended` line, then nothing but statuses; whether the line was printed
    /// (not when suspended already).
    func suspend() -> Bool {
        var printed = false
        apply { hold in
            let outputs = hold.suspend()
            printed = outputs.contains(.suspended)
            return outputs
        }
        return printed
    }

    /// Resumes: the `resumed` line and the flush.
    func resume() { apply { $0.resume() } }

    private func apply(_ change: (inout FleetHold) -> [FleetHold.Output]) {
        state.withLock { state in
            let outputs = change(&state.hold)
            guard !outputs.isEmpty else { return }
            let t = LogTime(ContinuousClock.now - start)
            for output in outputs { state.out.line(line(output, t: t)) }
        }
    }

    private func line(_ output: FleetHold.Output, t: LogTime) -> String {
        switch output {
        case .event(let event): return json ? jsonLine(event, t: t) : humanLine(event, t: t)
        case .suspended:
            return json
                ? "{\"type\":\"suspended\",\"t\":\(t.json.jsonText),\"subscriber\":\"\(Self.subscriber)\"}"
                : human.paint(human.timeColumn(t.seconds), "2") + "  " + human.paint("⏸ suspended — holding notifications", "36")
        case .resumed(let flushed):
            return json
                ? "{\"type\":\"resumed\",\"t\":\(t.json.jsonText),\"subscriber\":\"\(Self.subscriber)\",\"flushed\":\(flushed)}"
                : human.paint(human.timeColumn(t.seconds), "2") + "  " + human.paint("▶ resumed — \(flushed) flushed", "36")
        }
    }

    private func jsonLine(_ event: FleetEvent, t: LogTime) -> String {
        var members: [(String, JSONValue)] = []
        switch event {
        case .notification(let n):
            members = [("type", "notification"), ("t", t.json)]
            if !n.time.isEmpty { members.append(("time", .string(n.time))) }
            members += [
                ("subscriber", .string(Self.subscriber)), ("host", .string(n.host)), ("key", .string(n.key)),
                ("value", n.value), ("coalesced", .integer(Int64(n.coalesced))),
            ]
            if let previous = n.previous { members.append(("previous", previous)) }
        case .host(let host, let online):
            members = [("type", "source"), ("t", t.json), ("source", .string("host:\(host)"))]
            members.append(("status", online ? "running" : "unavailable"))
            if !online { members.append(("reason", "offline")) }
        case .broker(let status, let reason):
            members = [("type", "source"), ("t", t.json), ("source", "mqtt"), ("status", .string(status))]
            if let reason { members.append(("reason", .string(reason))) }
        }
        var text = "{"
        for (index, (name, value)) in members.enumerated() {
            if index > 0 { text += "," }
            JSONValue.writeString(name, to: &text)
            text += ":"
            value.write(to: &text)
        }
        return text + "}"
    }

    private func humanLine(_ event: FleetEvent, t: LogTime) -> String {
        var line = human.paint(human.timeColumn(t.seconds), "2") + "  "
        switch event {
        case .notification(let n):
            line += human.pad(Self.printable(n.host), 12) + "  " + human.paint(human.pad(Self.printable(n.key), human.keyWidth), "1")
                + "  " + n.value.jsonText
            if n.retained, n.coalesced == 0 {
                line += "  " + human.paint("(current)", "2")
            } else if n.coalesced != 1 {
                line += "  " + human.paint("×\(n.coalesced)", "33")
            }
            if let previous = n.previous { line += "  " + human.paint("was \(previous.jsonText)", "2") }
        case .host(let host, let online):
            line += human.pad(Self.printable(host), 12) + "  "
                + (online ? human.paint("● online", "32") : human.paint("○ offline", "33"))
        case .broker(let status, let reason):
            line += status == "running"
                ? human.paint("● broker: connected", "32")
                : human.paint("○ broker: \(status) — \(Self.printable(reason ?? ""))", "33")
        }
        return line
    }

    /// `text` with its control characters (a terminal's escape sequences, line breaks) written
    /// as `\u{…}`: hosts and keys come from whoever publishes to the broker.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
