public import EpollLoop

/// A monitor connection (`org.freedesktop.DBus.Monitoring.BecomeMonitor`): a connection of its
/// own that the bus gives a copy of every message one of its rules matches, and that never sends
/// anything once it is a monitor (the bus closes a monitor on its first message).
///
/// It connects, registers (`Hello`), asks to become a monitor with `rules` (the bus's syntax:
/// `type='method_call',destination=':1.7'`), then reports `.ready`; from then on each copied
/// message is `.message` with its header only (its body is never decoded), until the bus closes
/// the connection (`.ended`, once). A refusal of `BecomeMonitor` (the bus's policy, too many
/// rules) is `.ended` with the bus's error, before any `.ready`. A monitor's rules are fixed: for
/// other rules, open another monitor.
///
/// Every message the monitor receives is taken as handled, so libdbus answers none of the copied
/// method calls (an answer would be a message sent, and would close the monitor). Its received
/// messages are bounded by `maximumReceivedSize` as a `DBusConnection`'s are.
///
/// Loop-confined like `DBusConnection`: make it, use it and close it on its loop's thread;
/// `handler` runs there, never inside `init`.
public final class DBusMonitor {
    /// What the monitor reports.
    public enum Event: Sendable, Hashable {
        /// The bus made it a monitor: copies follow.
        case ready
        /// A copy of a message that one of the rules matched.
        case message(Header)
        /// The connection failed, was refused, or was closed by the bus; nothing follows.
        case ended(DBusError)
    }

    /// A copied message's header.
    public struct Header: Sendable, Hashable {
        /// Its kind.
        public var kind: DBusMessage.Kind
        /// The sender's unique name, as the bus set it.
        public var sender: String?
        /// Its destination: a unique or a well-known name; `nil` for a broadcast signal.
        public var destination: String?
        /// Its interface, if any.
        public var interface: String?
        /// Its member (method or signal name), if any.
        public var member: String?

        /// A header.
        public init(kind: DBusMessage.Kind, sender: String?, destination: String?, interface: String?, member: String?) {
            self.kind = kind
            self.sender = sender
            self.destination = destination
            self.interface = interface
            self.member = member
        }
    }

    /// The rules it asked for.
    public let rules: [String]
    /// Its unique name once registered.
    public private(set) var uniqueName: String?

    private unowned let context: LoopContext
    private var link: DBusLink?
    private var pending: DBusPendingCall?
    private var isMonitor = false
    private let handler: (Event) -> Void
    private let timeout: Duration

    /// Opens a connection to `address` and asks it to become a monitor with `rules`; `handler`
    /// gets `.ready`, then the copies, or `.ended`. `timeout` bounds each of the two calls.
    public init(
        address: DBusAddress, rules: [String], context: LoopContext, maximumReceivedSize: Int = 4 << 20,
        timeout: Duration = .seconds(5), handler: @escaping (Event) -> Void
    ) {
        self.rules = rules
        self.context = context
        self.handler = handler
        self.timeout = timeout
        do {
            let link = try DBusLink(address: try address.resolve(), context: context, maximumReceivedSize: maximumReceivedSize)
            self.link = link
            link.onMessage = { [weak self] message in
                self?.received(message)
                return true
            }
            try call(DBusMessage.methodCall(destination: .bus, path: .bus, interface: .bus, member: "Hello")) { [weak self] reply in
                self?.registered(reply)
            }
        } catch {
            end(error, later: true)
        }
    }

    deinit {
        pending?.cancel()
        link?.shutDown()
    }

    /// Closes the connection; nothing is reported after it.
    public func close() {
        pending?.cancel()
        pending = nil
        link?.shutDown()
        link = nil
    }

    private func registered(_ reply: DBusMessage) {
        guard let name = (try? reply.arguments())?.first?.stringValue else {
            end(DBusError(name: DBusError.Name.failed, message: "Hello returned no unique name"))
            return
        }
        uniqueName = name
        do {
            let become = try DBusMessage.methodCall(
                destination: .bus, path: .bus, interface: "org.freedesktop.DBus.Monitoring", member: "BecomeMonitor",
                arguments: [.array(elementSignature: "s", rules.map { .string($0) }), .uint32(0)])
            try call(become) { [weak self] _ in
                guard let self else { return }
                self.isMonitor = true
                self.handler(.ready)
            }
        } catch {
            end(error)
        }
    }

    /// Sends `message` with a reply expected; `done` gets a successful reply, an error reply ends
    /// the monitor.
    private func call(_ message: DBusMessage, done: @escaping (DBusMessage) -> Void) throws(DBusError) {
        guard let link else { throw .disconnected() }
        let pending = try link.sendWithReply(message, timeout: timeout)
        self.pending = pending
        try pending.whenCompleted { [weak self] reply in
            guard let self else { return }
            self.pending = nil
            guard let reply else { return self.end(DBusError(name: DBusError.Name.noReply, message: "no reply")) }
            if reply.kind == .error { return self.end(reply.error()) }
            done(reply)
        }
    }

    private func received(_ message: DBusMessage) {
        if message.kind == .signal, message.path == "/org/freedesktop/DBus/Local", message.member == "Disconnected" {
            // Leave libdbus's dispatch before the link goes.
            context.runSoon { [weak self] in self?.end(.disconnected("the bus closed the monitor connection")) }
            return
        }
        guard isMonitor else { return }
        handler(.message(Header(
            kind: message.kind, sender: message.sender, destination: message.destination,
            interface: message.interface, member: message.member)))
    }

    private func end(_ error: DBusError, later: Bool = false) {
        guard later || link != nil else { return }
        close()
        if later {
            context.runSoon { [weak self] in self?.handler(.ended(error)) }
        } else {
            handler(.ended(error))
        }
    }
}
