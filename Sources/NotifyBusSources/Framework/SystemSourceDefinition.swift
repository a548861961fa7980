import EpollLoop
public import NotifyBus

/// What a built-in source is, apart from its configuration: its name, the patterns of its keys,
/// and the watcher that does its work on the source's loop.
///
/// Each built-in configuration names its source with one (`SystemSourceConfiguration.source`),
/// e.g. `LocaleConfiguration.source.name` is `"locale"`.
public struct SystemSourceDefinition<Configuration: Sendable>: Sendable {
    /// The source's name, for messages and logs, e.g. `"locale"`.
    public let name: String
    /// The patterns of the keys the source publishes.
    public let keyPatterns: [KeyPattern]
    /// The key that every problem the source logs concerns, for a source of one key (`locale`).
    let problemKey: String?
    /// Makes the watcher on the loop, at each `run()`.
    let makeWatcher: @Sendable (NotificationBus, Configuration, LoopContext, SourceHooks) -> any LoopWatcher

    /// The source named `name`, publishing `keyPatterns`, whose work `Watcher` does.
    init<Watcher: ConfiguredWatcher>(
        name: String, keyPatterns: [KeyPattern], problemKey: String? = nil, watcher: Watcher.Type
    ) where Watcher.Configuration == Configuration {
        self.name = name
        self.keyPatterns = keyPatterns
        self.problemKey = problemKey
        makeWatcher = { bus, configuration, context, hooks in
            Watcher(bus: bus, configuration: configuration, context: context, hooks: hooks)
        }
    }
}
