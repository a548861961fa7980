import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket standing in for sway's, to send a watcher what sway never would: bytes without
/// the magic, a message over the limit, a tree that is not JSON, messages cut in pieces.
final class SwayFakeServer {
    /// The socket's path.
    let path: String
    private let directory: String
    private let listener: Int32
    private var connection: Int32 = -1

    /// Listens on a new socket (or only binds it, so that a connection is refused, when
    /// `listening` is false).
    init(listening: Bool = true) throws {
        directory = try makeTemporaryDirectory("notifybus-fake-sway")
        path = directory + "/sway-ipc.sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard listener >= 0, bound == 0, !listening || listen(listener, 4) == 0 else {
            throw HarnessError("fake sway socket: errno \(errno)")
        }
    }

    deinit {
        if connection >= 0 { close(connection) }
        close(listener)
        removeTree(directory)
    }

    /// Takes the watcher's connection (waiting up to 5 s) and reads what it sends first, up to
    /// `byteCount` bytes (the subscription and the tree request: 14 + 22 and 14).
    func accept(reading byteCount: Int = 50) throws -> [UInt8] {
        var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 5000) == 1 else { throw HarnessError("no connection to the fake sway") }
        connection = Glibc.accept(listener, nil, nil)
        guard connection >= 0 else { throw HarnessError("accept: errno \(errno)") }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        return receive(byteCount)
    }

    /// Up to `byteCount` bytes from the connection, waiting up to 5 s for each piece.
    func receive(_ byteCount: Int) -> [UInt8] {
        var received: [UInt8] = []
        while received.count < byteCount {
            var readable = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&readable, 1, 5000) == 1 else { break }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(connection, &chunk, min(chunk.count, byteCount - received.count))
            guard count > 0 else { break }
            received += chunk[0..<count]
        }
        return received
    }

    /// Writes `bytes` to the connection (all of them, or as many as the peer takes before it closes).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// A message as sway frames it: magic, length, type, payload.
    static func message(type: UInt32, payload: String, length: UInt32? = nil) -> [UInt8] {
        let body = Array(payload.utf8)
        let announced = length ?? UInt32(body.count)
        var bytes = Array("i3-ipc".utf8)
        for value in [announced, type] {
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        return bytes + body
    }
}
