import ArgumentParser

@main
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
