import CForeignToplevel
import CWaylandClient
package import EpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a Wayland compositor: a `struct wl_display *` with its registry, driven by
/// the project's epoll loop, with no thread of its own.
///
/// Connecting (`init(name:)`) asks for the registry; a round trip (`roundtrip(timeout:)`, which
/// blocks, with a deadline) fills `globals`. Once `watch(on:afterEvents:onFailure:)` has put
/// the socket on a loop, the loop reads and dispatches the compositor's events as they arrive
/// (`wl_display_prepare_read`, `wl_display_read_events`, `wl_display_dispatch_pending`) and
/// writes the requests the client queued (`wl_display_flush`, waiting for writability only while
/// the socket is full). Idle, it costs nothing: no timer, one registration that sleeps in
/// `epoll_wait`.
///
/// Objects made on the connection (`ForeignToplevelManager`, `PlasmaWindowManager`) collect their events while
/// libwayland dispatches them and hand them over after it returns; then `afterEvents` runs. So
/// any handler may send requests, stop objects or close the connection without re-entering
/// libwayland.
///
/// Lives on one thread (the loop's); `close()` (also run by `deinit`) destroys the proxies of
/// every object made on it and disconnects.
package final class WaylandDisplay {
    /// The display name connected to: a socket name relative to `$XDG_RUNTIME_DIR` (such as
    /// `wayland-1`), or an absolute path.
    package let name: String
    /// The connection's socket (`wl_display_get_fd`); owned by the connection.
    package let fileDescriptor: Int32
    /// The compositor's process id, from the socket's peer credentials (`getsockopt` with
    /// `SO_PEERCRED`), taken when connecting; `nil` when the kernel does not say.
    package let compositorPID: Int32?
    /// The compositor's globals by their registry names, as the last dispatched
    /// `wl_registry.global` and `global_remove` events left them.
    package private(set) var globals: [UInt32: WaylandGlobal] = [:]
    /// Whether `close()` ran.
    package private(set) var isClosed = false
    /// Why the connection failed, once it has.
    package private(set) var failure: WaylandError?

    let display: OpaquePointer
    private(set) var registry: OpaquePointer?
    private let registryListener: UnsafeMutablePointer<wl_registry_listener>
    private let callbackListener: UnsafeMutablePointer<wl_callback_listener>
    /// Outstanding `wl_display.sync` callbacks by their proxy.
    private var syncs: [OpaquePointer: SyncRequest] = [:]
    /// Completions of syncs that came back, to run after dispatching.
    private var completed: [() -> Void] = []
    /// Objects with proxies on this connection.
    private var owners: [ProxyOwnerReference] = []
    private unowned var context: LoopContext?
    private var registration: IORegistration?
    private var watchingWrites = false
    private var afterEvents: (() -> Void)?
    private var onFailure: ((WaylandError) -> Void)?
    private var delivering = false

    /// Connects to the compositor at `name` and asks for its registry (sent by the next flush or
    /// round trip). Wraps `wl_display_connect` and `wl_display_get_registry`.
    /// - Parameter name: a socket name relative to `$XDG_RUNTIME_DIR` or an absolute path, as
    ///   libwayland takes it; `nil` or empty: `$WAYLAND_DISPLAY`, else `wayland-0`
    ///   (`$WAYLAND_SOCKET` is not used).
    /// - Throws: `WaylandError.noCompositor` when nothing accepts the connection (no socket, no
    ///   `$XDG_RUNTIME_DIR`); `.requestFailed` when libwayland cannot make the registry.
    package init(name: String?) throws(WaylandError) {
        let resolved = Self.resolvedName(name)
        errno = 0
        guard let display = wl_display_connect(resolved) else {
            throw .noCompositor(display: resolved, errno: errno)
        }
        self.name = resolved
        self.display = display
        fileDescriptor = wl_display_get_fd(display)
        compositorPID = Self.peerPID(of: fileDescriptor)
        registryListener = .allocate(capacity: 1)
        registryListener.initialize(to: wl_registry_listener(global: registryGlobal, global_remove: registryGlobalRemove))
        callbackListener = .allocate(capacity: 1)
        callbackListener.initialize(to: wl_callback_listener(done: syncDone))
        guard let registry = wl_display_get_registry(display) else {
            close()
            throw .requestFailed(operation: "wl_display.get_registry")
        }
        self.registry = registry
        _ = wl_registry_add_listener(registry, registryListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { close() }

    // MARK: Round trips

    /// Sends `wl_display.sync` and waits, blocking, until the compositor answers it: every
    /// request sent before has been handled, and every event it caused has been dispatched (and
    /// handed over). Use before `watch(on:afterEvents:onFailure:)`, for the registry, say.
    /// Wraps `wl_display_sync`, `wl_display_flush`, `poll` and the prepare-read sequence.
    /// - Throws: `WaylandError.noAnswer` after `timeout` (the connection stays usable);
    ///   `.connectionLost` or `.protocolError` when the connection fails.
    package func roundtrip(timeout: Duration) throws(WaylandError) {
        try checkUsable()
        let request = SyncRequest(completion: nil)
        try send(request)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !request.done {
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { throw fail(currentError(errno)) }
            }
            if request.done {
                wl_display_cancel_read(display)
                break
            }
            let wantsWrite: Bool
            do throws(WaylandError) {
                wantsWrite = try flushSocket()
            } catch {
                wl_display_cancel_read(display)
                throw fail(error)
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                wl_display_cancel_read(display)
                throw .noAnswer(operation: "wl_display.sync", milliseconds: Self.milliseconds(timeout))
            }
            var descriptor = pollfd(
                fd: fileDescriptor, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: Self.milliseconds(remaining)))
            if ready < 0 {
                let code = errno
                wl_display_cancel_read(display)
                if code == EINTR { continue }
                throw fail(.connectionLost(errno: code))
            }
            if ready > 0, descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                if wl_display_read_events(display) < 0 { throw fail(currentError(errno)) }
            } else {
                wl_display_cancel_read(display)
            }
            if wl_display_dispatch_pending(display) < 0 { throw fail(currentError(errno)) }
        }
        deliver()
    }

    /// Sends `wl_display.sync`; `completion` runs after the compositor answered it (every
    /// request sent before was handled, every event it caused was handed over), on the loop.
    /// Nothing runs when the connection closes or fails first. Wraps `wl_display_sync`.
    /// - Throws: `WaylandError.requestFailed` on a closed or failed connection.
    package func sync(_ completion: @escaping () -> Void) throws(WaylandError) {
        try checkUsable()
        try send(SyncRequest(completion: completion))
        try flush()
    }

    private func send(_ request: SyncRequest) throws(WaylandError) {
        guard let callback = wl_display_sync(display) else { throw .requestFailed(operation: "wl_display.sync") }
        syncs[callback] = request
        _ = wl_callback_add_listener(callback, callbackListener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A sync came back (from libwayland's dispatch): the callback proxy goes, the completion
    /// waits for the end of the dispatch.
    fileprivate func syncCameBack(_ callback: OpaquePointer) {
        guard let request = syncs.removeValue(forKey: callback) else { return }
        wl_callback_destroy(callback)
        request.done = true
        if let completion = request.completion { completed.append(completion) }
    }

    // MARK: The loop

    /// Puts the socket on `context`'s loop: from now on the loop reads and dispatches events as
    /// they arrive, hands them over, then calls `afterEvents`; `onFailure` is called once when
    /// the connection fails (the compositor went away, a protocol error), after which nothing
    /// more is read. Events already queued are dispatched on the loop's next round. Wraps
    /// `LoopContext.register(fileDescriptor:interest:enabled:handler:)` and `wl_display_flush`.
    /// - Throws: `WaylandError.loopUnavailable` when the loop cannot watch the socket (or it is
    ///   watched already); the connection's failure, if it has failed.
    package func watch(
        on context: LoopContext, afterEvents: @escaping () -> Void, onFailure: @escaping (WaylandError) -> Void
    ) throws(WaylandError) {
        try checkUsable()
        guard registration == nil else { throw .loopUnavailable("the connection is watched already") }
        do {
            registration = try context.register(fileDescriptor: fileDescriptor, interest: .readable) { [weak self] events in
                self?.handle(events)
            }
        } catch {
            throw .loopUnavailable("\(error)")
        }
        self.context = context
        watchingWrites = false
        self.afterEvents = afterEvents
        self.onFailure = onFailure
        context.runSoon { [weak self] in self?.handle([]) }
        try flush()
    }

    /// Whether `watch(on:afterEvents:onFailure:)` put the socket on a loop (and the connection
    /// has not failed or closed since).
    package var isWatched: Bool { registration != nil }

    /// Replaces what a watched connection calls after each batch of events and on its failure:
    /// the connection has a new owner (the registry read, then the watcher). Nothing happens on
    /// a connection that is not watched.
    package func handOver(afterEvents: @escaping () -> Void, onFailure: @escaping (WaylandError) -> Void) {
        guard isWatched else { return }
        self.afterEvents = afterEvents
        self.onFailure = onFailure
    }

    /// Sends the queued requests. What the socket cannot take now is sent when it becomes
    /// writable, if the connection is watched (otherwise by the next flush or round trip).
    /// Wraps `wl_display_flush`.
    /// - Throws: `WaylandError.connectionLost` when writing fails for another reason than a full
    ///   socket or a compositor that went away (which the next read reports).
    package func flush() throws(WaylandError) {
        guard !isClosed, failure == nil else { return }
        let wantsWrite: Bool
        do throws(WaylandError) {
            wantsWrite = try flushSocket()
        } catch {
            throw fail(error)
        }
        if let registration, let context, wantsWrite != watchingWrites {
            watchingWrites = wantsWrite
            try? context.setInterest(wantsWrite ? [.readable, .writable] : .readable, for: registration)
        }
    }

    /// One `wl_display_flush`; returns whether requests are left for a writable socket.
    private func flushSocket() throws(WaylandError) -> Bool {
        guard wl_display_flush(display) < 0 else { return false }
        let code = errno
        switch code {
        case EAGAIN: return true
        case EPIPE: return false  // the compositor is gone: reading reports it, with its last words
        default: throw currentError(code)
        }
    }

    /// Readiness of the socket (or `[]`: dispatch what is queued).
    private func handle(_ events: IOEvents) {
        guard !isClosed, failure == nil else { return }
        var error: WaylandError?
        reading: do {
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 {
                    error = currentError(errno)
                    break reading
                }
            }
            if events.isDisjoint(with: [.readable, .error, .hangup]) {
                wl_display_cancel_read(display)
            } else if wl_display_read_events(display) < 0 {
                error = currentError(errno)
                break reading
            }
            if wl_display_dispatch_pending(display) < 0 { error = currentError(errno) }
        }
        deliver()
        guard !isClosed, failure == nil else { return }
        if let error {
            report(fail(error))
        } else {
            do throws(WaylandError) {
                try flush()
            } catch {
                report(error)
            }
        }
    }

    /// Hands over what the last dispatch collected: sync completions, the objects' events, then
    /// `afterEvents`; again while a handler's round trip collected more. Not re-entered (such a
    /// round trip leaves the handing over to the outer call).
    private func deliver() {
        guard !delivering else { return }
        delivering = true
        defer { delivering = false }
        repeat {
            while !isClosed {
                if !completed.isEmpty {
                    completed.removeFirst()()
                } else if let owner = owners.lazy.compactMap(\.object).first(where: \.hasPendingEvents) {
                    owner.deliverEvents()
                } else {
                    break
                }
            }
            if !isClosed { afterEvents?() }
        } while !isClosed && (!completed.isEmpty || owners.contains { $0.object?.hasPendingEvents == true })
    }

    /// Records the connection's failure and stops reading; returns the error.
    private func fail(_ error: WaylandError) -> WaylandError {
        if failure == nil { failure = error }
        if let registration, let context { context.deregister(registration) }
        registration = nil
        return failure ?? error
    }

    private func report(_ error: WaylandError) {
        let handler = onFailure
        onFailure = nil
        afterEvents = nil
        handler?(error)
    }

    private func checkUsable() throws(WaylandError) {
        if let failure { throw failure }
        guard !isClosed else { throw .requestFailed(operation: "a request on a closed connection") }
    }

    // MARK: Objects on the connection

    /// Registers an object whose proxies must go before the connection does.
    func adopt(_ owner: any WaylandProxyOwner) {
        owners.removeAll { $0.object == nil }
        owners.append(ProxyOwnerReference(object: owner))
    }

    // MARK: Closing

    /// Stops watching the socket, destroys the proxies of every object made on the connection,
    /// the registry's and the outstanding syncs', and disconnects; nothing is reported after
    /// this. Wraps `wl_proxy_destroy` (through the objects), `wl_registry_destroy`,
    /// `wl_callback_destroy`, `wl_display_flush` and `wl_display_disconnect`.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        if let registration, let context { context.deregister(registration) }
        registration = nil
        afterEvents = nil
        onFailure = nil
        completed = []
        let objects = owners.compactMap(\.object)
        owners = []
        for object in objects { object.releaseProxies() }
        for callback in syncs.keys { wl_callback_destroy(callback) }
        syncs = [:]
        if let registry { wl_registry_destroy(registry) }
        registry = nil
        _ = wl_display_flush(display)
        wl_display_disconnect(display)
        registryListener.deinitialize(count: 1)
        registryListener.deallocate()
        callbackListener.deinitialize(count: 1)
        callbackListener.deallocate()
    }

    fileprivate func registryAnnounced(_ global: WaylandGlobal) { globals[global.name] = global }
    fileprivate func registryRemoved(_ name: UInt32) { globals[name] = nil }
}

@available(*, unavailable, message: "a WaylandDisplay stays on its loop thread")
extension WaylandDisplay: Sendable {}

/// An outstanding `wl_display.sync`.
private final class SyncRequest {
    var done = false
    let completion: (() -> Void)?
    init(completion: (() -> Void)?) { self.completion = completion }
}

// libwayland's callbacks run inside `wl_display_dispatch_pending`, on the loop thread; `data` is
// the WaylandDisplay, unretained (it destroys the proxies before it goes away).

private func registryGlobal(
    _ data: UnsafeMutableRawPointer?, _ registry: OpaquePointer?, _ name: UInt32, _ interface: UnsafePointer<CChar>?,
    _ version: UInt32
) {
    guard let data, let interface else { return }
    Unmanaged<WaylandDisplay>.fromOpaque(data).takeUnretainedValue()
        .registryAnnounced(WaylandGlobal(name: name, interface: String(cString: interface), version: version))
}

private func registryGlobalRemove(_ data: UnsafeMutableRawPointer?, _ registry: OpaquePointer?, _ name: UInt32) {
    guard let data else { return }
    Unmanaged<WaylandDisplay>.fromOpaque(data).takeUnretainedValue().registryRemoved(name)
}

private func syncDone(_ data: UnsafeMutableRawPointer?, _ callback: OpaquePointer?, _ serial: UInt32) {
    guard let data, let callback else { return }
    Unmanaged<WaylandDisplay>.fromOpaque(data).takeUnretainedValue().syncCameBack(callback)
}
