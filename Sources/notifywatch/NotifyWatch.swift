import ArgumentParser

@main
struct NotifyWatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifywatch",
        abstract: "Watch system notifications, coalesced per key while suspended.",
        discussion: """
            Replay an event log (CONTRACT format version 1) and print the notifications
            each subscriber receives:

              notifywatch replay Examples/logs/background-rotation.jsonl
              notifywatch replay Examples/logs/policies.jsonl --json | jq .
              notifywatch replay recording.jsonl --realtime
            """,
        version: "0.1.0",
        subcommands: [Replay.self]
    )
}
