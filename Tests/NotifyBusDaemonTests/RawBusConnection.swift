import DBus
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A connection to a bus spoken byte by byte over its Unix socket, with blocking calls: the
/// attacker and the measuring client of the hostile-client tests.
///
/// Unlike `DBusClient`, it sends any message `Wire` can build (bodies of any size and signature,
/// calls without an interface), reads only when asked (a client that stops reading is one that
/// does not call `receive`), and hands back each message's exact wire bytes. Use it from one
/// thread at a time (`onOwnThread` runs blocking work off Swift's cooperative pool).
final class RawBusConnection: @unchecked Sendable {
    let fd: Int32
    /// Our unique name on the bus.
    private(set) var uniqueName = ""
    private var nextSerial: UInt32 = 1
    private var buffer: [UInt8] = []
    private var start = 0
    /// Messages received while waiting for something else, in order.
    private(set) var inbox: [WireMessage] = []

    /// Connects to `address` (`unix:path=…`), authenticates (EXTERNAL) and says `Hello`.
    init(address: String) throws {
        guard let pathPart = address.split(separator: ",").first(where: { $0.hasPrefix("unix:path=") }) else {
            throw HarnessError("not a unix:path= address: \(address)")
        }
        let path = String(pathPart.dropFirst("unix:path=".count))
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw HarnessError("connect \(path): errno \(errno)")
        }
        let uid = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
        try write([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8))
        let answer = try readAuthLine()
        guard answer.hasPrefix("OK ") else { throw HarnessError("authentication refused: \(answer)") }
        try write(Array("BEGIN\r\n".utf8))
        let hello = try call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "Hello")
        guard hello.type == .methodReturn, let name = try hello.arguments().first?.stringValue else {
            throw HarnessError("Hello failed: \(hello.errorName ?? "?")")
        }
        uniqueName = name
    }

    deinit { close(fd) }

    /// Closes the socket: the bus sees us leave.
    func disconnect() { shutdown(fd, Int32(SHUT_RDWR)) }

    // MARK: Sending

    /// Sends a method call with `body` (already marshalled, of `signature`); returns its serial.
    @discardableResult
    func send(
        destination: String? = "org.notifybus.Bus1", path: String, interface: String?, member: String,
        signature: String = "", body: [UInt8] = [], flags: UInt8 = 0
    ) throws -> UInt32 {
        let serial = nextSerial
        nextSerial &+= 1
        try write(Wire.methodCall(
            serial: serial, destination: destination, path: path, interface: interface, member: member,
            signature: signature, body: body, flags: flags))
        return serial
    }

    /// Sends a method call with `arguments`; returns its serial.
    @discardableResult
    func send(
        destination: String? = "org.notifybus.Bus1", path: String, interface: String?, member: String,
        arguments: [DBusValue]
    ) throws -> UInt32 {
        let (signature, body) = Wire.body(arguments)
        return try send(destination: destination, path: path, interface: interface, member: member, signature: signature, body: body)
    }

    /// Sends a method call and waits for its reply (other messages meanwhile go to `inbox`).
    /// - Throws: `HarnessError` when no reply comes within `timeout`.
    func call(
        destination: String? = "org.notifybus.Bus1", path: String, interface: String?, member: String,
        signature: String = "", body: [UInt8] = [], timeout: Duration = .seconds(20)
    ) throws -> WireMessage {
        let serial = try send(
            destination: destination, path: path, interface: interface, member: member, signature: signature, body: body)
        return try reply(to: serial, timeout: timeout)
    }

    /// `call` with `arguments`.
    func call(
        destination: String? = "org.notifybus.Bus1", path: String, interface: String?, member: String,
        arguments: [DBusValue], timeout: Duration = .seconds(20)
    ) throws -> WireMessage {
        let (signature, body) = Wire.body(arguments)
        return try call(
            destination: destination, path: path, interface: interface, member: member, signature: signature, body: body,
            timeout: timeout)
    }

    /// Waits for the reply to `serial`; other messages meanwhile go to `inbox`.
    func reply(to serial: UInt32, timeout: Duration = .seconds(20)) throws -> WireMessage {
        if let index = inbox.firstIndex(where: { $0.replySerial == serial }) { return inbox.remove(at: index) }
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let message = try readMessage(until: deadline) else {
                throw HarnessError("no reply to call \(serial) within \(timeout)")
            }
            if message.replySerial == serial { return message }
            inbox.append(message)
        }
    }

    // MARK: Receiving

    /// The next message: from `inbox` first, then from the socket, waiting up to `timeout`;
    /// `nil` on timeout or when the bus closed the connection.
    func receive(timeout: Duration) throws -> WireMessage? {
        if !inbox.isEmpty { return inbox.removeFirst() }
        return try readMessage(until: ContinuousClock.now + timeout)
    }

    /// Takes what `inbox` holds.
    func takeInbox() -> [WireMessage] {
        defer { inbox = [] }
        return inbox
    }

    private func readMessage(until deadline: ContinuousClock.Instant) throws -> WireMessage? {
        while true {
            if let length = Wire.messageLength(buffer[start...]), buffer.count - start >= length {
                let message = WireMessage(bytes: Array(buffer[start..<(start + length)]), received: .now)
                start += length
                if start > 1 << 20 || start == buffer.count {
                    buffer.removeSubrange(0..<start)
                    start = 0
                }
                return message
            }
            guard try fill(until: deadline) else { return nil }
        }
    }

    /// Reads what is there (waiting until `deadline`); `false` on timeout or end of stream.
    private func fill(until deadline: ContinuousClock.Instant) throws -> Bool {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { return false }
        let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno == EINTR { return true }
        guard ready > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = read(fd, &chunk, chunk.count)
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return true }
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    private func readAuthLine() throws -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while !(line.count >= 2 && line.suffix(2) == [13, 10]) {
            guard read(fd, &byte, 1) == 1 else { throw HarnessError("the bus closed during authentication") }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw HarnessError("write to the bus: errno \(errno)") }
            offset += n
        }
    }
}

/// Runs `body` on a thread of its own (blocking I/O must not hold one of the cooperative pool's
/// few threads) and returns what it returns.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        startThread { continuation.resume(with: Result { try body() }) }
    }
}

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Starts a detached thread running `body`.
func startThread(_ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(result == 0, "pthread_create: \(result)")
    pthread_detach(thread)
}
