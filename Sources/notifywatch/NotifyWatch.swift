import ArgumentParser
import LoopExecutor

/// The entry point: Swift concurrency's global executor, `Task.sleep` included, becomes the
/// project's own epoll loop threads before anything runs, so an idle watcher wakes for nothing (the
/// default executor on Linux re-arms a one-second libdispatch timer for as long as the program runs).
@main
enum Main {
    static func main() async {
        LoopExecutor.install()
        await NotifyWatch.main()
    }
}

struct NotifyWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifywatch",
        abstract: "Watch system notifications, coalesced per key while suspended.",
        discussion: """
            Watch live (the default), list the sources, or replay an event log:

              notifywatch                                   watch everything; Ctrl-Z suspends, fg resumes
              notifywatch 'battery/**' orientation --json   watch some keys, as JSON lines
              notifywatch sources                           what can run here, and its keys
              notifywatch replay Examples/logs/background-rotation.jsonl
            """,
        version: "0.1.0",
        subcommands: [Watch.self, Sources.self, Replay.self],
        defaultSubcommand: Watch.self
    )
}
