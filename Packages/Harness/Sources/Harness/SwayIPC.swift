#if canImport(Glibc)
import Glibc
#endif

/// One connection to sway's IPC socket (`i3-ipc`, a little-endian u32 length and u32 type, then
/// the payload), for a caller that times a command itself: `send` returns once the command is
/// written, `receive` reads the reply (or an event, on a subscribed connection) when it comes.
public final class SwayIPC {
    /// `RUN_COMMAND`.
    public static let runCommand: UInt32 = 0
    /// `SUBSCRIBE`.
    public static let subscribe: UInt32 = 2
    /// `GET_TREE`.
    public static let getTree: UInt32 = 4

    /// The connected socket.
    public let descriptor: Int32

    /// Connects to sway's socket at `path`.
    /// - Throws: `HarnessError` when it cannot.
    public init(socket path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard descriptor >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            if descriptor >= 0 { close(descriptor) }
            throw HarnessError("cannot make a socket for \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw HarnessError("cannot connect to sway at \(path): \(String(cString: strerror(code)))")
        }
    }

    deinit { close(descriptor) }

    /// Writes one message of `type` with `payload`.
    public func send(_ type: UInt32, _ payload: String) throws {
        let body = Array(payload.utf8)
        var message = Array("i3-ipc".utf8)
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: type.littleEndian) { message.append(contentsOf: $0) }
        message.append(contentsOf: body)
        guard message.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == message.count else {
            throw HarnessError("cannot write to sway's IPC socket")
        }
    }

    /// The next message (a reply, or an event on a subscribed connection), waiting up to 10 s.
    public func receive() throws -> (type: UInt32, payload: [UInt8]) {
        let header = try read(14)
        let length = header[6..<10].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let type = header[10..<14].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (type, try read(Int(length)))
    }

    /// Sends a message and returns the payload of its reply.
    public func call(_ type: UInt32, _ payload: String) throws -> [UInt8] {
        try send(type, payload)
        return try receive().payload
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) > 0 else { throw HarnessError("sway did not answer within 10 s") }
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + done, count - done) }
            guard got > 0 else { throw HarnessError("sway closed its IPC socket") }
            done += got
        }
        return bytes
    }
}
