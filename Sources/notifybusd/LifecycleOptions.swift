import ArgumentParser
import NotifyBusLifecycle

/// `--freeze-background [--freeze-delay SECONDS] [--freeze-exempt APP_ID]... [--freeze-config FILE]
/// [--toplevels auto|sway|wlr|kde] [--freeze-wake-grace SECONDS] [--freeze-task-limit SECONDS]` and `--thaw-all` (specification: Freezing background apps).
/// Malformed values exit 64 whether or not `--freeze-background` is given.
struct LifecycleOptions: ConfigurationOptions {
    @Flag(name: .customLong("freeze-background"), help: "Freeze the cgroups of apps whose windows stay in the background, and thaw them when focused.")
    var freezeBackground = false

    @Option(name: .customLong("freeze-delay"), help: ArgumentHelp(
        "Seconds in the background before an app is frozen: 2 to 3600 (default: 10).", valueName: "seconds"))
    var delay: String?

    @Option(name: .customLong("freeze-exempt"), help: ArgumentHelp(
        "An app id never frozen (repeatable).", valueName: "app-id"))
    var exempt: [String] = []

    @Option(name: .customLong("freeze-wake-grace"), help: ArgumentHelp(
        "Seconds a frozen app woken by a message (or thawed by someone else) runs in the background before it is frozen again: 1 to 600 (default: 10).",
        valueName: "seconds"))
    var wakeGrace: String?

    @Option(name: .customLong("freeze-task-limit"), help: ArgumentHelp(
        "Seconds a background task (org.notifybus.Lifecycle1) keeps its app running in the background: 1 to 600 (default: 30).",
        valueName: "seconds"))
    var taskLimit: String?

    @Option(name: .customLong("freeze-config"), help: ArgumentHelp(
        "A file of key = value lines: delay, exempt, toplevels, cgroup-root, wake-grace, task-limit, app-units.", valueName: "file"))
    var configFile: String?

    @Option(name: .customLong("toplevels"), help: ArgumentHelp(
        "Where the windows come from: auto (sway when SWAYSOCK answers, else the first of kde and wlr that WAYLAND_DISPLAY offers), sway, wlr, kde.", valueName: "backend"),
        completion: .list(LifecycleConfiguration.Toplevels.allCases.map(\.rawValue)))
    var toplevels: String?

    @Flag(name: .customLong("thaw-all"), help: "Thaw every cgroup listed in $XDG_RUNTIME_DIR/notifybus/frozen, empty it, and exit.")
    var thawAll = false

    /// The lifecycle's configuration: the file's, then the options over it; `nil` without
    /// `--freeze-background`.
    /// - Throws: `LifecycleConfiguration.Problem` naming what is wrong.
    func configuration() throws(LifecycleConfiguration.Problem) -> LifecycleConfiguration? {
        var configuration = LifecycleConfiguration()
        if let configFile { try configuration.apply(configurationFile: configFile) }
        if let delay { configuration.delay = try LifecycleConfiguration.delay(delay, where: "--freeze-delay") }
        if let wakeGrace { configuration.wakeGrace = try LifecycleConfiguration.grace(wakeGrace, where: "--freeze-wake-grace") }
        if let taskLimit { configuration.taskLimit = try LifecycleConfiguration.grace(taskLimit, where: "--freeze-task-limit") }
        configuration.exempt.formUnion(exempt)
        if let toplevels { configuration.toplevels = try LifecycleConfiguration.toplevels(toplevels, where: "--toplevels") }
        return freezeBackground ? configuration : nil
    }
}
