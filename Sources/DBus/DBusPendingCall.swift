import CDBus

/// A method call waiting for its reply: owns one reference to a libdbus `DBusPendingCall`
/// (released in `deinit`, after cancelling it and taking back its notify function).
///
/// Lives on the loop thread, like the link that made it (`DBusLink.send(_:timeout:)`).
final class DBusPendingCall {
    private let pointer: OpaquePointer
    private var completion: ((DBusMessage?) -> Void)?

    /// Takes over a reference the caller owns.
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        dbus_pending_call_set_notify(pointer, nil, nil, nil)
        dbus_pending_call_cancel(pointer)
        dbus_pending_call_unref(pointer)
    }

    /// Calls `completion` once, with the reply (`nil` when there is none), when it arrives or
    /// the call times out; at once when it has completed already. Wraps
    /// `dbus_pending_call_set_notify`.
    /// - Throws: `DBusError` (`NoMemory`) when libdbus cannot store the notify function.
    func whenCompleted(_ completion: @escaping (DBusMessage?) -> Void) throws(DBusError) {
        self.completion = completion
        let data = Unmanaged.passUnretained(self).toOpaque()
        let set = dbus_pending_call_set_notify(pointer, { _, data in
            guard let data else { return }
            let call = Unmanaged<DBusPendingCall>.fromOpaque(data).takeUnretainedValue()
            withExtendedLifetime(call) { call.complete() }
        }, data, nil)
        guard set != 0 else {
            self.completion = nil
            throw .noMemory
        }
        // It may have completed already (the link was lost while sending).
        if dbus_pending_call_get_completed(pointer) != 0 { complete() }
    }

    /// Stops waiting: the completion is not called. Wraps `dbus_pending_call_cancel`.
    func cancel() {
        completion = nil
        dbus_pending_call_cancel(pointer)
    }

    private func complete() {
        guard let completion else { return }
        self.completion = nil
        let reply = dbus_pending_call_steal_reply(pointer).map(DBusMessage.init(adopting:))
        completion(reply)
    }

    /// `duration` as libdbus's timeout in milliseconds (at least 1; infinite past `Int32`'s range).
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 1 }
        if seconds >= Int64(Int32.max / 1000) { return NOTIFYBUS_DBUS_TIMEOUT_INFINITE }
        return Int32(seconds) * 1000 + max(Int32(attoseconds / 1_000_000_000_000_000), seconds == 0 ? 1 : 0)
    }
}
