import CDBusRaw
import Harness

#if canImport(Glibc)
import Glibc
#endif

/// One private libdbus connection, used on one thread: messages are popped from its queue and
/// handled by the caller (no filters, no dispatch), the least a D-Bus client does.
public final class RawConnection {
    private let handle: OpaquePointer
    /// Its unique name on the bus.
    public let uniqueName: String
    /// Its socket, to `poll` several connections at once.
    public let fileDescriptor: Int32

    /// Connects to `address` and registers with the bus (`Hello`).
    public init(address: String) throws {
        var error = DBusError()
        dbus_error_init(&error)
        guard let handle = dbus_connection_open_private(address, &error) else {
            throw HarnessError("cannot connect to \(address): \(Self.text(&error))")
        }
        dbus_connection_set_exit_on_disconnect(handle, 0)
        guard dbus_bus_register(handle, &error) != 0 else {
            let text = Self.text(&error)
            dbus_connection_close(handle)
            dbus_connection_unref(handle)
            throw HarnessError("Hello on \(address): \(text)")
        }
        self.handle = handle
        uniqueName = dbus_bus_get_unique_name(handle).map { String(cString: $0) } ?? ""
        var descriptor: Int32 = -1
        dbus_connection_get_unix_fd(handle, &descriptor)
        fileDescriptor = descriptor
    }

    deinit {
        dbus_connection_close(handle)
        dbus_connection_unref(handle)
    }

    /// Adds a match rule (`AddMatch`, waiting for the reply).
    public func addMatch(_ rule: String) throws {
        var error = DBusError()
        dbus_error_init(&error)
        dbus_bus_add_match(handle, rule, &error)
        if dbus_error_is_set(&error) != 0 { throw HarnessError("AddMatch \(rule): \(Self.text(&error))") }
    }

    /// Owns `name`, or throws when it cannot be the primary owner.
    public func requestName(_ name: String) throws {
        var error = DBusError()
        dbus_error_init(&error)
        let result = dbus_bus_request_name(handle, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
        guard result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER else {
            throw HarnessError("cannot own \(name): \(dbus_error_is_set(&error) != 0 ? Self.text(&error) : "reply \(result)")")
        }
    }

    /// Queues `message` and writes what the socket takes now; its serial.
    @discardableResult
    public func send(_ message: Message) -> UInt32 {
        var serial: UInt32 = 0
        dbus_connection_send(handle, message.handle, &serial)
        return serial
    }

    /// Whether messages are queued that the socket has not taken yet.
    public var hasMessagesToSend: Bool { dbus_connection_has_messages_to_send(handle) != 0 }

    /// Allows received messages of up to `bytes` (libdbus's default is 32 MiB).
    public func setMaximumMessageSize(_ bytes: Int) { dbus_connection_set_max_message_size(handle, bytes) }

    /// Writes everything queued, blocking until it is written.
    public func flush() { dbus_connection_flush(handle) }

    /// Calls a method and waits for its reply; messages that arrive meanwhile stay queued.
    public func call(
        destination: String, path: String, interface: String, member: String, _ arguments: [Value] = [],
        timeoutMilliseconds: Int32 = 10_000
    ) throws -> [Value] {
        let message = Message.call(destination: destination, path: path, interface: interface, member: member, arguments)
        var error = DBusError()
        dbus_error_init(&error)
        guard let reply = dbus_connection_send_with_reply_and_block(handle, message.handle, timeoutMilliseconds, &error) else {
            throw HarnessError("\(interface).\(member) on \(destination): \(Self.text(&error))")
        }
        return Message(owning: reply).arguments
    }

    /// Calls a method of the bus itself (`org.freedesktop.DBus`).
    public func callBus(_ member: String, _ arguments: [Value] = []) throws -> [Value] {
        try call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: member, arguments)
    }

    /// The next message already read, without reading the socket.
    public func pop() -> Message? {
        dbus_connection_pop_message(handle).map(Message.init(owning:))
    }

    /// Reads what the socket has now (without blocking) into the queue; `false` once disconnected.
    @discardableResult
    public func readAvailable() -> Bool {
        dbus_connection_read_write(handle, 0) != 0
    }

    /// The next message, waiting at most `timeoutMilliseconds` (-1: without limit) for one.
    public func next(timeoutMilliseconds: Int32) -> Message? {
        if let message = pop() { return message }
        let deadline = monotonicNanoseconds() + Int64(timeoutMilliseconds) * 1_000_000
        while true {
            var remaining: Int32 = -1
            if timeoutMilliseconds >= 0 {
                remaining = Int32(max(0, (deadline - monotonicNanoseconds()) / 1_000_000))
            }
            var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready > 0 {
                guard readAvailable() else { return nil }
                if let message = pop() { return message }
            } else if ready == 0 {
                return nil
            }
        }
    }

    private static func text(_ error: inout DBusError) -> String {
        defer { dbus_error_free(&error) }
        guard dbus_error_is_set(&error) != 0 else { return "failed" }
        let name = error.name.map { String(cString: $0) } ?? ""
        let message = error.message.map { String(cString: $0) } ?? ""
        return "\(name): \(message)"
    }
}
