import ArgumentParser
import Logging
import NotifyBus
import NotifyBusCommandLine
import NotifyBusSources

struct Sources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List each source, its status here, and the keys it publishes.",
        discussion: """
            Starts each source just long enough to see whether it can run, then stops it.

            Examples:
              notifywatch sources
              notifywatch sources --json
            """
    )

    @Flag(help: "Print one JSON object per source.")
    var json = false

    @OptionGroup var buses: BusAddressOptions<SourceCatalog>

    func run() async throws {
        let bus = NotificationBus()
        // Only the statuses are listed: what the sources skip while starting is not shown.
        let quiet = Logger(label: "notifywatch.sources") { _ in SwiftLogNoOpLogHandler() }
        let sources = SourceCatalog.make(SourceCatalog.sourceNames, bus: bus, buses: buses, logger: quiet)
        let out = OutputStream(fd: 1, lineBuffered: true)
        var encoder = JSONLinesWriter()
        let statuses = await withThrowingTaskGroup(of: Void.self) { group -> [SourceStatus] in
            for source in sources { group.addTask { try await source.run() } }
            let statuses = await sources.firstStatuses(timeout: .seconds(5))
            group.cancelAll()
            return statuses
        }
        let nameWidth = max(10, (sources.map(\.name.count).max() ?? 0) + 2)
        for (source, status) in zip(sources, statuses) {
            let keys = source.keyPatterns.map(\.text)
            if json {
                out.line { encoder.encodeListing(source.name, status, keys: keys, into: &$0) }
            } else {
                let state = status.reason.map { "\(status.name) (\($0))" } ?? status.name
                out.line(source.name.padded(toUTF16Length: nameWidth)
                    + state.padded(toUTF16Length: max(40, state.count + 2))
                    + keys.joined(separator: " "))
            }
        }
        out.flush()
    }
}
