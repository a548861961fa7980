import CEpollLoop

/// Readiness of a file descriptor: what a registration is interested in, and what happened.
///
/// Interest is `.readable`, `.writable`, `.priority`, or several. A handler is also told about
/// `.error` and `.hangup`, which epoll always reports; a handler that sees them should stop
/// watching the descriptor (deregister or disable it), or the loop keeps calling it.
public struct IOEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits of the set.
    public let rawValue: UInt32
    /// The set with these bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data can be read (or a peer closed its end, or a listening socket has a connection). `EPOLLIN`.
    public static let readable = IOEvents(rawValue: 1 << 0)
    /// Data can be written without blocking. `EPOLLOUT`.
    package static let writable = IOEvents(rawValue: 1 << 1)
    /// An exceptional condition: out-of-band data, or an event of a kernel file that signals this
    /// way (a PSI trigger of `/proc/pressure/*` or a cgroup's `*.pressure` fired). `EPOLLPRI`.
    package static let priority = IOEvents(rawValue: 1 << 4)
    /// An error is pending on the descriptor. `EPOLLERR`; reported without being asked for.
    package static let error = IOEvents(rawValue: 1 << 2)
    /// The peer hung up. `EPOLLHUP`; reported without being asked for.
    package static let hangup = IOEvents(rawValue: 1 << 3)

    /// The members' names, e.g. `[readable, hangup]`.
    public var description: String {
        var parts: [String] = []
        if contains(.readable) { parts.append("readable") }
        if contains(.writable) { parts.append("writable") }
        if contains(.priority) { parts.append("priority") }
        if contains(.error) { parts.append("error") }
        if contains(.hangup) { parts.append("hangup") }
        return "[" + parts.joined(separator: ", ") + "]"
    }

    /// The members a registration can ask for: the others are reported without being asked for.
    static let interests: IOEvents = [.readable, .writable, .priority]

    /// The epoll interest mask for `.readable`/`.writable`/`.priority`.
    var epollInterest: UInt32 {
        var mask: UInt32 = 0
        if contains(.readable) { mask |= EPOLLIN.rawValue }
        if contains(.writable) { mask |= EPOLLOUT.rawValue }
        if contains(.priority) { mask |= EPOLLPRI.rawValue }
        return mask
    }

    /// The events epoll reported in `mask`.
    init(epollEvents mask: UInt32) {
        var events: IOEvents = []
        if mask & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 { events.insert(.readable) }
        if mask & EPOLLOUT.rawValue != 0 { events.insert(.writable) }
        if mask & EPOLLPRI.rawValue != 0 { events.insert(.priority) }
        if mask & EPOLLERR.rawValue != 0 { events.insert(.error) }
        if mask & EPOLLHUP.rawValue != 0 { events.insert(.hangup) }
        self = events
    }
}
