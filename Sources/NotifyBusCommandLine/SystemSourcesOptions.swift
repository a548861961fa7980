package import ArgumentParser
package import DBus

/// What a tool's help says of `--source` and `--no-source`: the names they take, list and
/// complete (notifywatch's are the sources', notifybusd's also its `lifecycle`).
package protocol SourceSelectionHelp {
    /// Every name the options take, in the order the sources are started and listed.
    static var sourceNames: [String] { get }
}

/// What a tool's help says of `--system-bus` and `--session-bus`: what each bus is for there.
package protocol BusAddressHelp {
    /// The help of `--system-bus <system-bus>`.
    static var systemBus: String { get }
    /// The help of `--session-bus <session-bus>`.
    static var sessionBus: String { get }
}

/// `[--source NAME]... [--no-source NAME]...`: which of the built-in sources run. notifywatch
/// and notifybusd both take this option group, each with the names of its own `Help`.
///
/// A name that is not one of `Help.sourceNames` fails validation: the tools exit 64 with
/// `unknown source "NAME" (the sources are: …)`.
package struct SourceSelectionOptions<Help: SourceSelectionHelp>: ParsableArguments {
    /// `--source`: only these sources run; none given, all do.
    @Option(
        name: .customLong("source"), help: "Run only this source (repeatable): \(Help.sourceNames.joined(separator: ", ")).",
        completion: .list(Help.sourceNames))
    package var onlySources: [String] = []

    /// `--no-source`: these sources do not run.
    @Option(name: .customLong("no-source"), help: "Do not run this source (repeatable).", completion: .list(Help.sourceNames))
    package var exceptSources: [String] = []

    /// No source named: all of them run.
    package init() {}

    package func validate() throws {
        if let name = (onlySources + exceptSources).first(where: { !Help.sourceNames.contains($0) }) {
            throw ValidationError("unknown source \"\(name)\" (the sources are: \(Help.sourceNames.joined(separator: ", ")))")
        }
    }

    /// Whether the source named `name` runs: named by `--source` (or none was), and not by `--no-source`.
    package func selects(_ name: String) -> Bool {
        (onlySources.isEmpty || onlySources.contains(name)) && !exceptSources.contains(name)
    }

    /// The names of the sources that run, in the order of `Help.sourceNames`.
    package var selected: [String] { Help.sourceNames.filter(selects) }
}

/// `[--system-bus ADDRESS] [--session-bus ADDRESS]`: where the D-Bus sources (and notifybusd's
/// service) connect. notifywatch and notifybusd both take this option group, each with the help
/// of its own `Help`.
package struct BusAddressOptions<Help: BusAddressHelp>: ParsableArguments {
    /// `--system-bus`: the system bus's address; `nil`: `$DBUS_SYSTEM_BUS_ADDRESS`.
    @Option(name: .customLong("system-bus"), help: ArgumentHelp(Help.systemBus))
    package var systemBus: String?

    /// `--session-bus`: the session bus's address; `nil`: `$DBUS_SESSION_BUS_ADDRESS`.
    @Option(name: .customLong("session-bus"), help: ArgumentHelp(Help.sessionBus))
    package var sessionBus: String?

    /// No address given: the standard buses.
    package init() {}

    /// The system bus: `--system-bus`, else the standard one.
    package var system: DBusAddress { systemBus.map(DBusAddress.address) ?? .system }

    /// The session bus: `--session-bus`, else the standard one.
    package var session: DBusAddress { sessionBus.map(DBusAddress.address) ?? .session }
}
