public import DBus
public import NotifyBus

/// The system locale from systemd-localed (`org.freedesktop.locale1` on the system bus) and the
/// locale files, published as the specification's `locale`: an object of locale variables, e.g.
/// `{"LANG": "de_DE.UTF-8", "LC_TIME": "en_GB.UTF-8"}`, in the order localed lists them.
///
/// What it does:
/// - Reads `Locale` (`as` of `NAME=value`) with `Properties.Get` at start, after every
///   reconnection to the bus and whenever `org.freedesktop.locale1` gets a new owner. The call
///   goes to the well-known name, so it bus-activates localed when it is not running.
/// - Follows `PropertiesChanged` from whichever process owns the name: localed exits after ~30 s
///   idle and the next activation has a new unique name, which the connection's name-owner
///   tracking follows. An idle exit changes nothing here (the value stays, status stays running).
/// - Watches the locale files (`/etc/locale.conf`, then `/etc/default/locale`; configurable)
///   with inotify on their directories, for edits that bypass localed: after an edit it asks
///   localed again (localed re-reads its file when it changed) or, when localed cannot be
///   reached, reads the files itself (the first that exists wins, as localed does).
/// - When localed cannot answer a read that no edit prompted (a re-read after fg, a
///   reconnection), the last value stands; the files are read then only if nothing is known yet
///   (localed not running at start). What localed said last is what its files said, and edits
///   since then are seen by the file watch; a localed that sees other files than this process
///   (a private mount namespace, as in the tests) is not contradicted.
/// - When the bus cannot be reached and nothing is known yet, it reads the files at once,
///   before reporting its status: without localed the files are authoritative (localed would
///   read the same). A file that sets nothing (only comments) gives `{}`, "no locale variables
///   set", which is what a process started there gets; no file at all gives no value. So a
///   value is published at start, once, and never first on a later re-read or at shutdown.
/// - Every read publishes through `publishIfChanged`.
///
/// Entries without `=` and a `Locale` of the wrong type are logged (key `locale`) and skipped.
/// Status: `running` while it can read the locale (from localed or the files); `unavailable`
/// while the bus is unreachable (file edits are still read and published then).
public typealias LocaleSource = SystemSource<LocaleConfiguration>

/// How `LocaleSource` behaves.
public struct LocaleConfiguration: Sendable {
    /// The bus localed is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// The locale files to watch, in order of precedence.
    public var files: [String]
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration

    /// Creates a configuration.
    public init(
        address: DBusAddress = .system, files: [String] = ["/etc/locale.conf", "/etc/default/locale"],
        connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10))
    ) {
        self.address = address
        self.files = files
        self.connection = connection
    }
}

extension SystemSource where Settings == LocaleConfiguration {
    /// The `locale` value for localed's `NAME=value` entries; entries without a name or `=` are
    /// returned in `invalid`. A repeated name keeps its first position and last value.
    public static func object(from entries: [String]) -> (value: JSONObject, invalid: [String]) {
        var object = JSONObject()
        var invalid: [String] = []
        for entry in entries {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                invalid.append(entry)
                continue
            }
            object[String(entry[..<equals])] = .string(String(entry[entry.index(after: equals)...]))
        }
        return (object, invalid)
    }

    /// The `NAME=value` entries of a locale file (`/etc/locale.conf`, `/etc/default/locale`):
    /// blank lines and `#` comments skipped, an `export ` prefix dropped, quotes around the value removed.
    public static func entries(fromFile text: String) -> [String] {
        var entries: [String] = []
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            var line = Substring(rawLine)
            while let first = line.first, first.isWhitespace { line.removeFirst() }
            while let last = line.last, last.isWhitespace { line.removeLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst("export ".count) }
            guard let equals = line.firstIndex(of: "=") else {
                entries.append(String(line))
                continue
            }
            let name = line[..<equals]
            var value = line[line.index(after: equals)...]
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = value.dropFirst().dropLast()
            }
            entries.append("\(name)=\(value)")
        }
        return entries
    }
}
