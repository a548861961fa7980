import CEpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// File-descriptor registrations: the epoll set and who is called for what.
extension LoopContext {
    /// A registration: a handler for some events on one descriptor.
    struct Registration {
        let fd: Int32
        var interest: IOEvents
        var enabled: Bool
        let handler: (IOEvents) -> Void
    }

    /// What the loop knows about one descriptor.
    struct WatchedDescriptor {
        /// Registrations on this descriptor, in registration order.
        var registrations: [UInt64] = []
        /// The interest mask given to epoll; `nil` when the descriptor is not in the epoll set.
        var epollMask: UInt32?
    }

    /// Watches `fileDescriptor` and calls `handler` on this thread when it is ready for what
    /// `interest` names (and on `.error`/`.hangup`).
    ///
    /// Several registrations may share a descriptor (libdbus, for one, adds separate read and
    /// write watches on its socket); the loop gives epoll the union of the enabled ones and calls
    /// each registration only for the events it asked for. Deregister before closing the
    /// descriptor. Wraps `epoll_ctl`.
    /// - Parameters:
    ///   - interest: `.readable`, `.writable`, `.priority`, or several; other members are ignored.
    ///   - enabled: a disabled registration is kept but not watched (see `setEnabled(_:for:)`).
    /// - Throws: `EventLoopError.systemCall` from `epoll_ctl` (e.g. `EPERM` for a regular file,
    ///   `EBADF` for a closed descriptor); `.shutDown` once the loop is shutting down.
    public func register(
        fileDescriptor: Int32, interest: IOEvents, enabled: Bool = true,
        handler: @escaping (IOEvents) -> Void
    ) throws(EventLoopError) -> IORegistration {
        guard !isTornDown else { throw .shutDown }
        let id = makeID()
        registrations[id] = Registration(
            fd: fileDescriptor, interest: interest.intersection(IOEvents.interests),
            enabled: enabled, handler: handler)
        descriptors[fileDescriptor, default: WatchedDescriptor()].registrations.append(id)
        do {
            try updateEpoll(for: fileDescriptor)
        } catch {
            removeRegistration(id)
            throw error
        }
        return IORegistration(id: id, fileDescriptor: fileDescriptor)
    }

    /// Changes what `registration` waits for. Wraps `epoll_ctl`.
    package func setInterest(_ interest: IOEvents, for registration: IORegistration) throws(EventLoopError) {
        guard var entry = registrations[registration.id] else { throw .unknownHandle }
        entry.interest = interest.intersection(IOEvents.interests)
        registrations[registration.id] = entry
        try updateEpoll(for: entry.fd)
    }

    /// Starts (`true`) or stops (`false`) watching for `registration` without forgetting it;
    /// libdbus's `dbus_watch_get_enabled` maps onto this. Wraps `epoll_ctl`.
    package func setEnabled(_ enabled: Bool, for registration: IORegistration) throws(EventLoopError) {
        guard var entry = registrations[registration.id] else { throw .unknownHandle }
        guard entry.enabled != enabled else { return }
        entry.enabled = enabled
        registrations[registration.id] = entry
        try updateEpoll(for: entry.fd)
    }

    /// Ends `registration`: its handler is not called again, not even for events already
    /// reported in the current round. Unknown or ended registrations are ignored.
    public func deregister(_ registration: IORegistration) {
        guard let entry = registrations[registration.id] else { return }
        removeRegistration(registration.id)
        // The descriptor may already be closed; then the kernel has dropped it from the set.
        try? updateEpoll(for: entry.fd)
    }

    private func removeRegistration(_ id: UInt64) {
        guard let entry = registrations.removeValue(forKey: id) else { return }
        descriptors[entry.fd]?.registrations.removeAll { $0 == id }
    }

    /// Gives epoll the union of the enabled registrations' interest in `fd`.
    private func updateEpoll(for fd: Int32) throws(EventLoopError) {
        guard var watched = descriptors[fd] else { return }
        var mask: UInt32 = 0
        for id in watched.registrations {
            if let entry = registrations[id], entry.enabled { mask |= entry.interest.epollInterest }
        }
        var operation: Int32
        switch (watched.epollMask, mask) {
        case (nil, 0):
            if watched.registrations.isEmpty { descriptors[fd] = nil }
            return
        case (nil, _): operation = EPOLL_CTL_ADD
        case (_?, 0): operation = EPOLL_CTL_DEL
        case (let current?, _) where current == mask: return
        default: operation = EPOLL_CTL_MOD
        }
        var event = epoll_event()
        event.events = mask
        event.data.u64 = UInt64(UInt32(bitPattern: fd))
        var result = epoll_ctl(shared.epollFD, operation, fd, &event)
        var code = errno
        if result != 0 && code == ENOENT && operation == EPOLL_CTL_MOD {
            // The descriptor was closed (leaving the set) and its number reused: add it anew.
            operation = EPOLL_CTL_ADD
            result = epoll_ctl(shared.epollFD, operation, fd, &event)
            code = errno
        }
        if operation == EPOLL_CTL_DEL {
            // ENOENT/EBADF: the descriptor was closed, and so already left the set.
            watched.epollMask = nil
        } else if result == 0 {
            watched.epollMask = mask
        }
        descriptors[fd] = watched.registrations.isEmpty && watched.epollMask == nil ? nil : watched
        if result != 0 && operation != EPOLL_CTL_DEL {
            throw .systemCall(operation: "epoll_ctl", errno: code)
        }
    }

    /// Calls the enabled registrations on `fd` that asked for any of the events in `mask`.
    func dispatch(fd: Int32, mask: UInt32) {
        let events = IOEvents(epollEvents: mask)
        guard let ids = descriptors[fd]?.registrations else { return }
        for id in ids {
            guard let entry = registrations[id], entry.enabled else { continue }
            let relevant = events.intersection(entry.interest.union([.error, .hangup]))
            if !relevant.isEmpty { entry.handler(relevant) }
        }
    }
}
