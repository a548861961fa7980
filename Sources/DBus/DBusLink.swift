import CDBus
import EpollLoop

#if canImport(Glibc)
import Glibc
#endif

/// One libdbus connection and its glue to the loop: watches become fd registrations, timeouts
/// become loop timers, dispatching runs soon after data arrives. Internal: the C pointer stays here.
///
/// Lives on the loop thread only. `shutDown()` (also run by `deinit`) closes the connection and
/// takes every callback back before the last reference is released, so libdbus never calls
/// into a released `DBusLink`.
final class DBusLink {
    let pointer: OpaquePointer
    unowned let context: LoopContext
    /// Told about every incoming message (filter); returns whether it answered a method call.
    var onMessage: (DBusMessage) -> Bool = { _ in false }
    private var watches: [OpaquePointer: IORegistration] = [:]
    private var timeouts: [OpaquePointer: LoopTimer] = [:]
    private var dispatchScheduled = false
    private(set) var isShutDown = false

    /// Opens a private connection to `address`. Wraps `dbus_connection_open_private`; the
    /// connection never exits the process on disconnect (`dbus_connection_set_exit_on_disconnect`).
    /// Connecting a Unix socket does not block; authentication and `Hello` happen on the loop.
    /// `maximumReceivedSize` bounds the bytes of received messages libdbus holds
    /// (`dbus_connection_set_max_received_size`).
    init(address: String, context: LoopContext, maximumReceivedSize: Int) throws(DBusError) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let opened = address.withCString { dbus_connection_open_private($0, &error) }
        guard let opened else {
            let name = error.name.map { String(cString: $0) } ?? DBusError.Name.noServer
            let message = error.message.map { String(cString: $0) } ?? "cannot connect to \(address)"
            throw DBusError(name: name, message: message)
        }
        pointer = opened
        self.context = context
        dbus_connection_set_exit_on_disconnect(opened, 0)
        dbus_connection_set_max_received_size(opened, max(1, maximumReceivedSize))
        install()
    }

    deinit {
        shutDown()
        dbus_connection_unref(pointer)
    }

    private var opaqueSelf: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func install() {
        let data = opaqueSelf
        dbus_connection_set_watch_functions(pointer, linkAddWatch, linkRemoveWatch, linkToggleWatch, data, nil)
        dbus_connection_set_timeout_functions(pointer, linkAddTimeout, linkRemoveTimeout, linkToggleTimeout, data, nil)
        dbus_connection_set_dispatch_status_function(pointer, linkDispatchStatus, data, nil)
        _ = dbus_connection_add_filter(pointer, linkFilter, data, nil)
        scheduleDispatch()
    }

    /// Closes the connection and removes every callback (watches and timers are deregistered).
    func shutDown() {
        guard !isShutDown else { return }
        isShutDown = true
        dbus_connection_close(pointer)
        dbus_connection_remove_filter(pointer, linkFilter, opaqueSelf)
        dbus_connection_set_dispatch_status_function(pointer, nil, nil, nil)
        // Replacing the functions removes every watch and timeout through the old ones.
        dbus_connection_set_watch_functions(pointer, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(pointer, nil, nil, nil, nil, nil)
        for registration in watches.values { context.deregister(registration) }
        for timer in timeouts.values { context.cancelTimer(timer) }
        watches = [:]
        timeouts = [:]
        onMessage = { _ in false }
    }

    /// Queues `message` for sending. Wraps `dbus_connection_send`.
    func send(_ message: DBusMessage) throws(DBusError) {
        guard !isShutDown else { throw .disconnected() }
        guard dbus_connection_send(pointer, message.pointer, nil) != 0 else { throw .noMemory }
    }

    /// Sends `message` and returns the call waiting for its reply. Wraps
    /// `dbus_connection_send_with_reply`.
    /// - Throws: `DBusError`: `Disconnected` when the link is shut down, `NoMemory`.
    func sendWithReply(_ message: DBusMessage, timeout: Duration) throws(DBusError) -> DBusPendingCall {
        guard !isShutDown else { throw .disconnected() }
        var pending: OpaquePointer?
        let milliseconds = DBusPendingCall.milliseconds(timeout)
        guard dbus_connection_send_with_reply(pointer, message.pointer, &pending, milliseconds) != 0 else {
            throw .noMemory
        }
        guard let pending else { throw .disconnected() }
        return DBusPendingCall(adopting: pending)
    }

    /// Takes a match rule back, without waiting for the answer. Wraps `dbus_bus_remove_match`.
    func removeMatch(_ rule: DBusMatchRule) {
        guard !isShutDown else { return }
        rule.text.withCString { dbus_bus_remove_match(pointer, $0, nil) }
    }

    /// Tells libdbus the unique name `Hello` returned. Wraps `dbus_bus_set_unique_name`.
    func setUniqueName(_ name: BusName) {
        _ = name.rawValue.withCString { dbus_bus_set_unique_name(pointer, $0) }
    }

    // MARK: Watches

    fileprivate func add(watch: OpaquePointer) -> Bool {
        let fd = dbus_watch_get_unix_fd(watch)
        guard fd >= 0 else { return true }
        let flags = dbus_watch_get_flags(watch)
        var interest: IOEvents = []
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { interest.insert(.readable) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { interest.insert(.writable) }
        let enabled = dbus_watch_get_enabled(watch) != 0
        do {
            let registration = try context.register(fileDescriptor: fd, interest: interest, enabled: enabled) {
                [weak self] events in self?.handle(watch: watch, events: events)
            }
            watches[watch] = registration
            return true
        } catch {
            return false
        }
    }

    fileprivate func remove(watch: OpaquePointer) {
        if let registration = watches.removeValue(forKey: watch) { context.deregister(registration) }
    }

    fileprivate func toggle(watch: OpaquePointer) {
        guard let registration = watches[watch] else { return }
        try? context.setEnabled(dbus_watch_get_enabled(watch) != 0, for: registration)
    }

    private func handle(watch: OpaquePointer, events: IOEvents) {
        guard !isShutDown else { return }
        var flags: UInt32 = 0
        if events.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
        if events.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
        if events.contains(.error) { flags |= DBUS_WATCH_ERROR.rawValue }
        if events.contains(.hangup) { flags |= DBUS_WATCH_HANGUP.rawValue }
        _ = dbus_watch_handle(watch, flags)
        if events.contains(.readable) { readOn(watch) }
        if !isShutDown, dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS {
            scheduleDispatch()
        }
    }

    /// libdbus reads at most 2 KiB of its socket each time a watch is handled; a large message
    /// would take a round of the loop per 2 KiB. While more waits in the socket (and libdbus
    /// still wants to read: it stops past `maximumReceivedSize`), read on, up to 256 KiB per
    /// round, so that other work of the loop is not kept waiting longer than that takes.
    private func readOn(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        guard fd >= 0 else { return }
        var rounds = 1
        var waiting = context.readableBytes(on: fd)
        while waiting > 0, rounds < 128, !isShutDown, dbus_watch_get_enabled(watch) != 0 {
            _ = dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
            rounds += 1
            waiting -= 2048
            if waiting <= 0 { waiting = context.readableBytes(on: fd) }
        }
    }

    // MARK: Timeouts

    fileprivate func add(timeout: OpaquePointer) -> Bool {
        if let timer = timeouts.removeValue(forKey: timeout) { context.cancelTimer(timer) }
        guard dbus_timeout_get_enabled(timeout) != 0 else { return true }
        let interval = Duration.milliseconds(max(1, Int64(dbus_timeout_get_interval(timeout))))
        timeouts[timeout] = context.scheduleTimer(after: interval, repeating: interval) { [weak self] in
            guard let self, !self.isShutDown, self.timeouts[timeout] != nil else { return }
            _ = dbus_timeout_handle(timeout)
            if !self.isShutDown { self.scheduleDispatch() }
        }
        return true
    }

    fileprivate func remove(timeout: OpaquePointer) {
        if let timer = timeouts.removeValue(forKey: timeout) { context.cancelTimer(timer) }
    }

    fileprivate func toggle(timeout: OpaquePointer) {
        _ = add(timeout: timeout)
    }

    // MARK: Dispatching

    fileprivate func scheduleDispatch() {
        guard !dispatchScheduled, !isShutDown else { return }
        dispatchScheduled = true
        context.runSoon { [weak self] in self?.dispatchQueued() }
    }

    /// Dispatches queued messages: 32 at most, the rest in the next round of the loop, so that
    /// what else it serves (other connections, timers, jobs) waits for no more than a batch
    /// while one peer floods this connection.
    private func dispatchQueued() {
        dispatchScheduled = false
        var rounds = 0
        while !isShutDown, dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS {
            if rounds == 32 {
                scheduleDispatch()
                return
            }
            _ = dbus_connection_dispatch(pointer)
            rounds += 1
        }
    }

    fileprivate func filter(_ raw: OpaquePointer) -> DBusHandlerResult {
        guard !isShutDown else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let message = DBusMessage(adopting: dbus_message_ref(raw))
        let answered = onMessage(message)
        // Method calls the connection did not answer (`Peer`) fall through to libdbus.
        return answered || message.kind == .signal
            ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
}

// The C callbacks: `data` is the DBusLink, unretained (it removes them before it goes away).

private func link(_ data: UnsafeMutableRawPointer?) -> DBusLink? {
    data.map { Unmanaged<DBusLink>.fromOpaque($0).takeUnretainedValue() }
}

private let linkAddWatch: DBusAddWatchFunction = { watch, data in
    guard let watch, let link = link(data) else { return 1 }
    return link.add(watch: watch) ? 1 : 0
}

private let linkRemoveWatch: DBusRemoveWatchFunction = { watch, data in
    guard let watch, let link = link(data) else { return }
    link.remove(watch: watch)
}

private let linkToggleWatch: DBusWatchToggledFunction = { watch, data in
    guard let watch, let link = link(data) else { return }
    link.toggle(watch: watch)
}

private let linkAddTimeout: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout, let link = link(data) else { return 1 }
    return link.add(timeout: timeout) ? 1 : 0
}

private let linkRemoveTimeout: DBusRemoveTimeoutFunction = { timeout, data in
    guard let timeout, let link = link(data) else { return }
    link.remove(timeout: timeout)
}

private let linkToggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    guard let timeout, let link = link(data) else { return }
    link.toggle(timeout: timeout)
}

private let linkDispatchStatus: DBusDispatchStatusFunction = { _, status, data in
    guard status == DBUS_DISPATCH_DATA_REMAINS, let link = link(data) else { return }
    link.scheduleDispatch()
}

private let linkFilter: DBusHandleMessageFunction = { _, message, data in
    guard let message, let link = link(data) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return link.filter(message)
}
