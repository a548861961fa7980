import EpollLoop
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A scripted Wayland compositor speaking the wire protocol itself, for what a real sway or KWin
/// does not do on demand: leave a window manager out of its registry, finish the manager, report
/// a protocol error, send garbage, list a thousand windows. It listens on a socket of its own,
/// serves one client at a time on a loop thread of its own, and answers:
/// - `wl_display.get_registry`: a `wl_registry.global` per global in `globals`;
/// - `wl_display.sync`: `wl_callback.done`, then `wl_display.delete_id`;
/// - `wl_registry.bind` of `zwlr_foreign_toplevel_manager_v1`: a `toplevel` event per window in
///   `windows`, each with its `app_id`, `state` and `done`;
/// - `wl_registry.bind` of `org_kde_plasma_window_management`: a `window` event per window (its
///   internal id, from 1), and each `get_window` of one: `app_id_changed`, `pid_changed`,
///   `state_changed` (its `flags`) and `initial_state`.
/// Every request it receives is recorded (object id, opcode). As a libwayland server does, it
/// queues what it sends and writes it once per batch of requests read (and once per scripted
/// action), not message by message: a client whose requests meet a socket full of one-message
/// writes fails in libwayland 1.21 ("Error sending request"), which no real compositor provokes.
/// `stop()` closes everything and removes its directory.
final class FakeCompositor: Sendable {
    /// A window announced on bind.
    struct Window: Sendable {
        var appID: String
        /// Its `state` array (wlr).
        var states: [UInt32] = []
        /// Its `state_changed` bitfield and process (KDE).
        var flags: UInt32 = 0
        var pid: UInt32 = 0
    }

    /// A request from the client: its object and opcode.
    struct Request: Sendable, Hashable {
        var object: UInt32
        var opcode: UInt16
    }

    /// A `wl_registry.bind` from the client.
    struct Bind: Sendable, Hashable {
        var interface: String
        var version: UInt32
        /// The new object's id.
        var id: UInt32
    }

    /// The socket's absolute path (a display name for libwayland).
    let path: String
    /// Every request received.
    let requests = Recorder<Request>()
    /// Every bind received.
    let binds = Recorder<Bind>()
    private let directory: String
    private let loop: EventLoopThread
    private let key = LoopLocalKey<Server>()

    init(globals: [(name: UInt32, interface: String, version: UInt32)], windows: [Window] = []) throws {
        directory = try makeTemporaryDirectory("notifybus-wlr-fake")
        path = directory + "/wayland-fake"
        loop = try EventLoopThread(name: "wlr-fake")
        let listener = try Self.listen(at: path)
        let key = key
        let requests = requests
        let binds = binds
        let globalList = globals.map { Global(name: $0.name, interface: $0.interface, version: $0.version) }
        try loop.execute { context in
            context[local: key] = Server(
                context: context, listener: listener, globals: globalList, windows: windows, requests: requests,
                binds: binds)
        }
    }

    /// Sends the manager's `finished` event (and nothing more to it).
    func finishManager() async throws {
        try await onServer { $0.finishManager() }
    }

    /// Sends `wl_display.error` on the manager object (code 7) and closes the connection, as a
    /// compositor does.
    func protocolError() async throws {
        try await onServer { $0.protocolError() }
    }

    /// Sends a message to an object the client never had, then an `app_id` event that cannot be
    /// decoded (its string longer than the message).
    func garbage() async throws {
        try await onServer { $0.garbage() }
    }

    /// Whether the client is connected (its socket open on the server's side).
    func clientConnected() async throws -> Bool {
        let key = key
        return try await loop.submit { context in context[local: key]?.client != nil }
    }

    private func onServer(_ work: @escaping @Sendable (Server) -> Void) async throws {
        let key = key
        try await loop.submit { context in
            guard let server = context[local: key] else { return }
            work(server)
            server.writeOutgoing()
        }
    }

    func stop() {
        let key = key
        try? loop.execute { context in context[local: key] = nil }
        loop.syncShutdown()
        removeTree(directory)
    }

    private static func listen(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else {
            let code = errno
            close(fd)
            throw HarnessError("bind/listen \(path): errno \(code)")
        }
        return fd
    }
}

private struct Global {
    var name: UInt32
    var interface: String
    var version: UInt32
}

/// The server's state, on its loop.
private final class Server {
    unowned let context: LoopContext
    let listener: Int32
    let globals: [Global]
    let windows: [FakeCompositor.Window]
    let requests: Recorder<FakeCompositor.Request>
    let binds: Recorder<FakeCompositor.Bind>
    var listening: IORegistration?
    var client: Int32?
    var clientRegistration: IORegistration?
    var buffer: [UInt8] = []
    /// Bytes the client's socket did not take yet.
    var outgoing: [UInt8] = []
    var registry: UInt32?
    var manager: UInt32?
    /// Whether the manager is KDE's (else wlr's).
    var plasma = false
    /// The last window object (a wlr handle or a KDE window).
    var lastWindow: UInt32 = 0
    var nextServerID: UInt32 = 0xff00_0000

    init(
        context: LoopContext, listener: Int32, globals: [Global], windows: [FakeCompositor.Window],
        requests: Recorder<FakeCompositor.Request>, binds: Recorder<FakeCompositor.Bind>
    ) {
        self.context = context
        self.listener = listener
        self.globals = globals
        self.windows = windows
        self.requests = requests
        self.binds = binds
        listening = try? context.register(fileDescriptor: listener, interest: .readable) { [weak self] _ in self?.accept() }
    }

    deinit {
        dropClient()
        if let listening { context.deregister(listening) }
        close(listener)
    }

    func accept() {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        dropClient()
        client = fd
        buffer = []
        registry = nil
        manager = nil
        plasma = false
        lastWindow = 0
        // A new client's server-allocated ids start again at the range's first (libwayland takes
        // only the next one).
        nextServerID = 0xff00_0000
        outgoing = []
        clientRegistration = try? context.register(fileDescriptor: fd, interest: .readable) { [weak self] events in
            if events.contains(.writable) { self?.writeOutgoing() }
            if !events.isDisjoint(with: [.readable, .hangup, .error]) { self?.read() }
        }
    }

    func dropClient() {
        if let clientRegistration { context.deregister(clientRegistration) }
        clientRegistration = nil
        if let client { close(client) }
        client = nil
    }

    func read() {
        guard let client else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { Glibc.read(client, $0.baseAddress, $0.count) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
            dropClient()
            return
        }
        guard count > 0 else { return }
        buffer += chunk[0..<count]
        while buffer.count >= 8 {
            let object = word(buffer, 0)
            let sizeAndOpcode = word(buffer, 4)
            let size = Int(sizeAndOpcode >> 16)
            guard size >= 8, buffer.count >= size else { break }
            let arguments = Array(buffer[8..<size])
            buffer.removeFirst(size)
            handle(object: object, opcode: UInt16(sizeAndOpcode & 0xffff), arguments: arguments)
        }
        writeOutgoing()
    }

    func handle(object: UInt32, opcode: UInt16, arguments: [UInt8]) {
        requests.append(FakeCompositor.Request(object: object, opcode: opcode))
        switch (object, opcode) {
        case (1, 0):  // wl_display.sync(new_id callback)
            let callback = word(arguments, 0)
            send(object: callback, opcode: 0, [.uint(0)])  // wl_callback.done
            send(object: 1, opcode: 1, [.uint(callback)])  // wl_display.delete_id
        case (1, 1):  // wl_display.get_registry(new_id registry)
            let id = word(arguments, 0)
            registry = id
            for global in globals {
                send(object: id, opcode: 0, [.uint(global.name), .string(global.interface), .uint(global.version)])
            }
        case (let target, 0) where target == registry:  // wl_registry.bind(name, interface, version, new_id)
            let length = Int(word(arguments, 4))
            let interface = String(decoding: arguments[8..<(8 + length - 1)], as: UTF8.self)
            let padded = (length + 3) & ~3
            let id = word(arguments, 8 + padded + 4)
            binds.append(FakeCompositor.Bind(interface: interface, version: word(arguments, 8 + padded), id: id))
            if interface == "org_kde_plasma_window_management" {
                manager = id
                plasma = true
                for index in windows.indices { send(object: id, opcode: 1, [.uint(UInt32(index + 1))]) }  // window(id)
                return
            }
            guard interface == "zwlr_foreign_toplevel_manager_v1" else { return }
            manager = id
            for window in windows {
                let handle = nextServerID
                nextServerID += 1
                send(object: id, opcode: 0, [.uint(handle)])  // toplevel(new_id)
                send(object: handle, opcode: 1, [.string(window.appID)])  // app_id
                send(object: handle, opcode: 4, [.array(window.states)])  // state
                send(object: handle, opcode: 5, [])  // done
                lastWindow = handle
            }
        case (let target, 1) where target == manager && plasma:  // get_window(new_id, internal id)
            let id = word(arguments, 0)
            let index = Int(word(arguments, 4)) - 1
            guard windows.indices.contains(index) else { return }
            let window = windows[index]
            send(object: id, opcode: 1, [.string(window.appID)])  // app_id_changed
            send(object: id, opcode: 10, [.uint(window.pid)])  // pid_changed
            send(object: id, opcode: 2, [.uint(window.flags)])  // state_changed
            send(object: id, opcode: 6, [])  // initial_state
            lastWindow = id
        default:
            break
        }
    }

    func finishManager() {
        guard let manager else { return }
        send(object: manager, opcode: 1, [])
    }

    func protocolError() {
        send(object: 1, opcode: 0, [.uint(manager ?? 1), .uint(7), .string("a test's protocol error")])
        writeOutgoing()
        dropClient()
    }

    func garbage() {
        // Events for objects the client never had: libwayland drops them.
        send(object: 0x00ab_cdef, opcode: 3, [.uint(1)])
        // An `app_id` (opcode 1 of both window interfaces) whose string claims 1000 bytes in a
        // message of 16: libwayland cannot decode it, and the connection fails.
        var message: [UInt8] = []
        append(&message, lastWindow)
        append(&message, 16 << 16 | 1)
        append(&message, 1000)
        message += Array("abc\u{0}".utf8)
        write(message)
    }

    enum Argument {
        case uint(UInt32)
        case string(String)
        case array([UInt32])
    }

    func send(object: UInt32, opcode: UInt16, _ arguments: [Argument]) {
        var body: [UInt8] = []
        for argument in arguments {
            switch argument {
            case .uint(let value):
                append(&body, value)
            case .string(let text):
                let bytes = Array(text.utf8) + [0]
                append(&body, UInt32(bytes.count))
                body += bytes
                body += [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
            case .array(let values):
                append(&body, UInt32(values.count * 4))
                for value in values { append(&body, value) }
            }
        }
        var message: [UInt8] = []
        append(&message, object)
        append(&message, UInt32(8 + body.count) << 16 | UInt32(opcode))
        write(message + body)
    }

    /// Queues `bytes` for the client, for the next `writeOutgoing()`.
    func write(_ bytes: [UInt8]) {
        guard client != nil else { return }
        outgoing += bytes
    }

    /// Writes what the client's socket takes now of what is queued, the rest when it is writable.
    func writeOutgoing() {
        guard let client else { return }
        while !outgoing.isEmpty {
            let written = outgoing.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                outgoing.removeFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        if let clientRegistration {
            try? context.setInterest(outgoing.isEmpty ? .readable : [.readable, .writable], for: clientRegistration)
        }
    }

    private func append(_ bytes: inout [UInt8], _ value: UInt32) {
        withUnsafeBytes(of: value) { bytes += $0 }  // the wire is in host byte order
    }

    private func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        guard bytes.count >= offset + 4 else { return 0 }
        return bytes[offset..<(offset + 4)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }
}
