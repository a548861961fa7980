import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The tests' own Wayland client (`Tests/WaylandTestClient`, a C program) in a child process,
/// connected to a compositor: it follows the toplevels through `zwlr_foreign_toplevel_manager_v1`
/// (version 3), makes a virtual pointer so that phoc makes its seat, activates toplevels with
/// `activate(seat)` as Phosh's overview does, and covers them with a top-layer surface as Phosh's
/// overview and lock screen do. Works on phoc 0.24 and sway 1.7.
///
/// One command line, one answer line (`ok …` or `error …`); the methods send one command each
/// and throw `HarnessError` on an `error` answer, on no answer, or when the client is gone.
public final class WaylandTestClientProcess: Sendable {
    /// A toplevel as the client lists it.
    public struct Toplevel: Sendable, Hashable {
        /// Its app id (`""` for a window without one).
        public var appID: String
        /// Its state flags as of its last `done`: `maximized`, `minimized`, `activated`, `fullscreen`.
        public var states: Set<String>

        /// Whether the compositor reports it `activated` (it has the focus).
        public var activated: Bool { states.contains("activated") }

        public init(appID: String, states: Set<String>) {
            self.appID = appID
            self.states = states
        }
    }

    /// The client's standard error (its message when the compositor goes away).
    public let log: String
    /// Whether the compositor gave it a `wl_seat` (which `activate` needs).
    public let hasSeat: Bool
    private let process: ChildProcess
    /// One command at a time: an answer is the next line.
    private let exchange = Mutex(())

    /// The client's process ID.
    public var pid: Int32 { process.pid }

    /// Whether the client has exited (it does when the compositor goes away).
    public var hasExited: Bool { process.hasExited }

    /// Starts the client `executable` (the root package's `WaylandTestClient`, as this process's
    /// user) with `environment` (`XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY`: the compositor's), its
    /// standard error appended to `log`, and waits up to `timeout` until it is connected (its
    /// `ready` line).
    /// - Throws: `HarnessError` when the client is not built or does not connect (the error quotes
    ///   its log).
    public init(executable: String, environment: [String: String], log: String, timeout: Duration = patience) throws {
        guard access(executable, X_OK) == 0 else { throw HarnessError("\(executable) is missing (swift build --product WaylandTestClient)") }
        process = try ChildProcess(
            executable: executable, arguments: ["--timeout", String(Self.milliseconds(timeout))],
            environment: environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine },
            standardError: .append(log))
        self.log = log
        let first = process.readLine(timeout: timeout + .seconds(1))
        guard let first, first.hasPrefix("ready") else {
            process.terminate(signal: SIGKILL)
            throw HarnessError("WaylandTestClient did not connect (\(first ?? "no line")): \(readFile(log) ?? "")")
        }
        hasSeat = first == "ready"
    }

    deinit { process.terminate(signal: SIGTERM, timeout: .seconds(2)) }

    /// Sends `command` and returns its answer after `ok` (trimmed).
    /// - Throws: `HarnessError` on an `error` answer or none within `timeout`.
    @discardableResult
    public func request(_ command: String, timeout: Duration = patience + .seconds(5)) throws -> String {
        try exchange.withLock { _ in
            try send(command)
            return try answer(to: command, timeout: timeout)
        }
    }

    /// Sends `command` and returns at once, for a caller that times what follows it (an
    /// `activate`); `answer(to:timeout:)` then reads its answer. No other command meanwhile.
    /// - Throws: `HarnessError` when the client is gone.
    public func send(_ command: String) throws {
        guard process.send(command) else { throw HarnessError("WaylandTestClient took no \(command): \(readFile(log) ?? "")") }
    }

    /// The answer to `command`, sent with `send(_:)`, after `ok` (trimmed).
    /// - Throws: `HarnessError` on an `error` answer or none within `timeout`.
    @discardableResult
    public func answer(to command: String, timeout: Duration = patience + .seconds(5)) throws -> String {
        guard let answer = process.readLine(timeout: timeout) else {
            throw HarnessError("WaylandTestClient gave no answer to \(command): \(readFile(log) ?? "")")
        }
        guard answer == "ok" || answer.hasPrefix("ok ") else { throw HarnessError("WaylandTestClient: \(command): \(answer)") }
        return String(answer.dropFirst(2).drop { $0 == " " })
    }

    /// The `activate` command of `activate(appID:timeout:)`, for `send(_:)`.
    public static func activateCommand(appID: String, timeout: Duration = patience) -> String {
        "activate \(appID) \(milliseconds(timeout))"
    }

    /// The toplevels the compositor listed, in the order it announced them to this client.
    public func toplevels() throws -> [Toplevel] {
        try request("list").split(separator: " ").map { entry in
            let colon = entry.lastIndex(of: ":") ?? entry.endIndex
            let states = entry[colon...].dropFirst().split(separator: ",").map(String.init)
            return Toplevel(appID: String(entry[..<colon]), states: Set(states))
        }
    }

    /// The app ids of the activated toplevels.
    public func activated() throws -> [String] {
        try toplevels().filter(\.activated).map(\.appID)
    }

    /// Waits (up to `timeout`) until a toplevel of `appID` is listed.
    public func waitForToplevel(appID: String, timeout: Duration = patience) throws {
        try request("wait \(appID) \(Self.milliseconds(timeout))", timeout: timeout + .seconds(5))
    }

    /// Waits (up to `timeout`) until no toplevel of `appID` is listed.
    public func waitUntilGone(appID: String, timeout: Duration = patience) throws {
        try request("gone \(appID) \(Self.milliseconds(timeout))", timeout: timeout + .seconds(5))
    }

    /// Activates the first toplevel of `appID` (`activate(seat)`) and waits (up to `timeout`)
    /// until the compositor reports it activated.
    public func activate(appID: String, timeout: Duration = patience) throws {
        try request(Self.activateCommand(appID: appID, timeout: timeout), timeout: timeout + .seconds(5))
    }

    /// Asks the compositor to close the first toplevel of `appID` (the protocol's `close`).
    public func close(appID: String) throws {
        try request("close \(appID)")
    }

    /// Maps a full-output top-layer surface with exclusive keyboard interactivity and waits until
    /// no toplevel is activated.
    public func cover() throws {
        try request("cover")
    }

    /// Destroys the cover; returns the app ids of the toplevels activated after a round trip.
    @discardableResult
    public func uncover() throws -> [String] {
        try request("uncover").split(separator: " ").map(String.init)
    }

    /// Ends the client (the end of its input, SIGKILL after 2 s) and waits for it; its wait
    /// status (0 when it ended at the end of its input).
    @discardableResult
    public func stop() -> Int32? {
        process.terminate(signal: 0, timeout: .seconds(2))
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        max(1, duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
