import EpollLoop
import Wayland

/// The Wayland window backends as the lifecycle starts them: connects to the display, reads its
/// registry on the loop (never waiting in a blocking round trip), then watches the windows
/// through the first of `protocols` that the registry offers, on that same connection: a
/// `KdeToplevelWatcher` or a `WlrToplevelWatcher`, whose updates go to `onUpdate` as they are.
///
/// The registry is read on the loop because KWin answers it only after hashing the executable of
/// a client it trusts (SHA-256 of the file at its path and of `/proc/PID/exe`, on its main
/// thread), which takes 15 to 25 ms per MB of the binary here (0.4 s for the packaged
/// notifybusd, 20 MB), more on a phone; a compositor that does not answer within
/// `registryTimeout` is reported lost. When the registry offers none of `protocols`,
/// `.lost(reason:)` says "the compositor does not offer …" with their names.
///
/// Runs on its loop's thread; its one timer lives only until the registry has been read.
/// Nothing is reported after `stop()`.
final class WaylandToplevelBackend: ToplevelBackend {
    /// A window protocol.
    enum WindowProtocol: Sendable, Hashable {
        /// `org_kde_plasma_window_management` (KWin).
        case kde
        /// `zwlr_foreign_toplevel_manager_v1` (wlroots compositors, phoc).
        case wlr

        /// Its global's interface name.
        var interfaceName: String {
            switch self {
            case .kde: PlasmaWindowManager.interfaceName
            case .wlr: ForeignToplevelManager.interfaceName
            }
        }
    }

    /// How long the compositor may take to send its registry.
    static let registryTimeout: Duration = .seconds(10)

    let compositorPID: Int32?
    private unowned let context: LoopContext
    private let protocols: [WindowProtocol]
    private let onUpdate: (ToplevelUpdate) -> Void
    private var connection: WaylandDisplay?
    private var watcher: (any ToplevelBackend)?
    private var timer: LoopTimer?
    private var ended = false

    /// Connects to `display` (nil: `$WAYLAND_DISPLAY`, else `wayland-0`) and asks for its registry;
    /// the rest happens on the loop, `onUpdate` never runs inside `init`.
    /// - Throws: `WaylandError.noCompositor` when nothing listens at the socket; `.requestFailed`,
    ///   `.loopUnavailable` when the connection cannot be used.
    init(
        context: LoopContext, display: String?, protocols: [WindowProtocol], timeout: Duration = registryTimeout,
        onUpdate: @escaping (ToplevelUpdate) -> Void
    ) throws(WaylandError) {
        let connection = try WaylandDisplay(name: display)
        self.context = context
        self.protocols = protocols
        self.onUpdate = onUpdate
        compositorPID = connection.compositorPID
        do throws(WaylandError) {
            try connection.watch(
                on: context, afterEvents: {}, onFailure: { [weak self] error in self?.fail(reason: error.description) })
            try connection.sync { [weak self] in self?.registryRead() }
        } catch {
            connection.close()
            throw error
        }
        self.connection = connection
        timer = context.scheduleTimer(after: timeout) { [weak self] in
            self?.timer = nil
            self?.fail(reason: WaylandError.noAnswer(operation: "wl_display.sync", milliseconds: timeout.wholeMilliseconds).description)
        }
    }

    deinit { release() }

    /// Stops: the watcher, or the registry read, and the connection; nothing is reported after it.
    func stop() {
        ended = true
        release()
    }

    /// The registry is known: the first protocol offered is watched on this connection.
    private func registryRead() {
        if let timer { context.cancelTimer(timer) }
        timer = nil
        guard !ended, let connection else { return }
        guard let chosen = protocols.first(where: { connection.global(named: $0.interfaceName) != nil }) else {
            fail(reason: WaylandError.protocolNotOffered(protocols.map(\.interfaceName).joined(separator: " or ")).description)
            return
        }
        do throws(WaylandError) {
            switch chosen {
            case .kde: watcher = try KdeToplevelWatcher(context: context, connection: connection, onUpdate: onUpdate)
            case .wlr: watcher = try WlrToplevelWatcher(context: context, connection: connection, onUpdate: onUpdate)
            }
        } catch {
            // The watcher closed the connection.
            self.connection = nil
            fail(reason: error.description)
        }
    }

    private func fail(reason: String) {
        guard !ended else { return }
        ended = true
        release()
        onUpdate(.lost(reason: reason))
    }

    private func release() {
        if let timer { context.cancelTimer(timer) }
        timer = nil
        watcher?.stop()
        watcher = nil
        connection?.close()
        connection = nil
    }
}

@available(*, unavailable, message: "a WaylandToplevelBackend stays on its loop thread")
extension WaylandToplevelBackend: Sendable {}

extension Duration {
    /// In whole milliseconds, rounded down.
    fileprivate var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
