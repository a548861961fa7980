public import DBus
import NotifyBus

/// Sleep and the session lock from systemd-logind (`org.freedesktop.login1` on the system bus),
/// published as the specification's `system/sleep` (`"awake"`, `"sleeping"`) and `session/locked`
/// (`true`, `false`).
///
/// What it does:
/// - Whenever logind gets an owner, reads the manager's properties (`GetAll` on
///   `/org/freedesktop/login1`, `org.freedesktop.login1.Manager`) and publishes `system/sleep`
///   `"awake"`, then follows the manager's `PrepareForSleep(b)`: true → `"sleeping"`,
///   false → `"awake"`.
/// - After a wake (`PrepareForSleep(false)`) it calls `Configuration.onWake`, so that the other
///   sources read their state again as after `fg` (`SystemSources.all` wires it to every other
///   source it makes).
/// - Finds this process's session with `GetSessionByPID(pid)`; when logind cannot say (no
///   session for the process, or a logind without the method), it asks
///   `/org/freedesktop/login1/session/auto` (logind's name for the caller's session) for its
///   `Id` and uses that session's object. It then reads the session's `LockedHint` (`GetAll` on
///   `org.freedesktop.login1.Session`) and follows its `PropertiesChanged`. While no session is
///   resolved there is no `session/locked`.
/// - A `PrepareForSleep` or `LockedHint` of the wrong type is logged (with its key) and skipped.
/// - `reread()` reads the manager and the session again (and looks for the session again when
///   none was found).
///
/// Status: `running` while logind answers (with or without a session), from the moment both
/// `system/sleep` and the session are read (`session/locked` published, or no session found), so
/// that both are among a new subscriber's initial values; `starting` while the session is looked
/// up; `unavailable` while logind is not running or the bus is unreachable (the keys keep their
/// last values).
public typealias LoginSource = SystemSource<LoginConfiguration>

/// How `LoginSource` behaves.
public struct LoginConfiguration: Sendable {
    /// The bus logind is on (the system bus, honouring `DBUS_SYSTEM_BUS_ADDRESS`).
    public var address: DBusAddress
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration
    /// The process whose session's lock is followed; `nil` means this process (`getpid()`).
    public var processID: Int32?
    /// Called after every wake (`PrepareForSleep(false)`), on the source's loop thread: it must
    /// not block (start the re-reads, don't wait for them).
    public var onWake: (@Sendable () -> Void)?

    /// Creates a configuration.
    public init(
        address: DBusAddress = .system, connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10)),
        processID: Int32? = nil, onWake: (@Sendable () -> Void)? = nil
    ) {
        self.address = address
        self.connection = connection
        self.processID = processID
        self.onWake = onWake
    }
}

extension SystemSource where Settings == LoginConfiguration {
    /// The object path of the logind session `id`, as logind makes it
    /// (`sd_bus_path_encode("/org/freedesktop/login1/session", id)`): every byte other than an
    /// ASCII letter or digit, and a leading digit, is written `_` and two hex digits
    /// (`"2"` → `…/session/_32`, `"c1"` → `…/session/c1`).
    public static func sessionPath(id: String) -> String {
        var encoded = ""
        for (index, byte) in id.utf8.enumerated() {
            let isLetter = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            if isLetter || (isDigit && index > 0) {
                encoded.append(Character(Unicode.Scalar(byte)))
            } else {
                let hex = String(byte, radix: 16)
                encoded += "_" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return "/org/freedesktop/login1/session/" + (encoded.isEmpty ? "_" : encoded)
    }
}
