#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import NotifyBus
import NotifyBusLog
import SystemSupport

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay an event log and print what each subscriber receives.",
        discussion: """
            Replay runs on virtual time, as fast as possible, unless --realtime or --speed
            paces it. A bad line stops the replay with FILE:LINE and a non-zero exit status
            (after printing what came before it), unless --skip-bad-lines.

            Examples:
              notifywatch replay Examples/logs/background-rotation.jsonl
              notifywatch replay Examples/logs/policies.jsonl --json
              notifywatch replay - < recording.jsonl
            """
    )

    @Argument(help: "The log file (`-` reads standard input).")
    var file: String

    @Flag(help: "Print one JSON object per line (specification: notifywatch output) instead of columns.")
    var json = false

    @Flag(help: "Pace the replay at the log's own speed.")
    var realtime = false

    @Option(help: "Pace the replay at FACTOR times the log's speed (2 = twice as fast).")
    var speed: Double?

    @Flag(help: "Report bad lines on stderr and go on past them.")
    var skipBadLines = false

    @Option(help: "Colour the human output: auto (on a terminal), always, never.")
    var color: ColorChoice = .auto

    enum ColorChoice: String, ExpressibleByArgument, CaseIterable { case auto, always, never }

    func validate() throws {
        if let speed, !(speed > 0 && speed.isFinite) {
            throw ValidationError("--speed must be a positive number, for example 2 or 0.5")
        }
    }

    func run() throws {
        let name = file == "-" ? "<stdin>" : file
        let bytes: [UInt8]
        switch file == "-" ? SmallFile.contents(ofDescriptor: STDIN_FILENO, limit: .max) : SmallFile.contents(of: file, limit: .max) {
        case .success(let read): bytes = read
        case .failure(let failure):
            printError("cannot read \(name): \(failure)")
            throw ExitCode(66)
        }

        let out = OutputStream(fd: STDOUT_FILENO, lineBuffered: realtime || speed != nil)
        // Parse the whole log first, then replay what came before the first bad line.
        let (parsed, parseError) = EventLog.readPrefix(of: bytes, file: name, skippingBadLines: skipBadLines)
        guard let log = parsed else {
            printError((parseError ?? EventLogError(file: name, line: nil, message: "unreadable")).description)
            throw ExitCode(1)
        }
        for skipped in log.skipped { printError("skipped " + skipped.description) }

        var human = HumanFormat(
            color: color == .always || (color == .auto && out.isTerminal && !Posix.hasEnvironment("NO_COLOR")),
            showSubscriber: Set(log.entries.compactMap(\.record.subscriber)).count > 1,
            origin: Self.recordedTime(log.header))
        human.keyWidth = min(40, max(16, log.entries.map { if case .event(let k, _, _) = $0.record { k.count } else { 0 } }.max() ?? 0))

        var encoder = JSONLinesWriter()
        let replayer = LogReplayer(log: log)
        var previousT = log.entries.first?.t.seconds ?? 0
        var skippedCount = log.skipped.count
        while !replayer.isFinished {
            let t = log.entries[replayer.position].t.seconds
            if let factor = speed ?? (realtime ? 1 : nil), t > previousT {
                out.flush()
                Posix.sleep(seconds: (t - previousT) / factor)
            }
            previousT = t
            do {
                for line in try replayer.step() {
                    if json {
                        out.line { encoder.encode(line.event, t: line.t.json, subscriber: line.subscriber, into: &$0) }
                    } else {
                        out.line(human.format(seconds: line.t.seconds, subscriber: line.subscriber, event: line.event))
                    }
                }
            } catch {
                guard skipBadLines else {
                    out.flush()
                    printError(error.description)
                    throw ExitCode(1)
                }
                skippedCount += 1
                printError("skipped " + error.description)
            }
        }
        out.flush()
        if let parseError {
            printError(parseError.description)
            throw ExitCode(1)
        }
        if skippedCount > 0 { printError("replayed with \(skippedCount) bad line(s) skipped") }
    }

    /// The header's `recorded` time, if it has a valid RFC 3339 one.
    static func recordedTime(_ header: JSONObject) -> WallTime? {
        header["recorded"]?.stringValue.flatMap { WallTime(rfc3339: $0) }
    }
}
