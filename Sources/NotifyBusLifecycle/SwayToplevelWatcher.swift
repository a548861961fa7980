package import EpollLoop

#if canImport(Glibc)
import Glibc
#endif

/// The windows sway shows, followed over its IPC socket (`SWAYSOCK`) on an epoll loop: the
/// window backend where sway is the compositor.
///
/// It subscribes to window and workspace events and reads the tree (`GET_TREE`) once at the
/// start and again after each event (at most one request in flight), and reports every open
/// view as `ToplevelUpdate.windows` whenever the list differs from the last one reported: the
/// container id, `app_id` (`nil` for an Xwayland view), the client's PID, and whether the view
/// has the focus. The logic is `SwayIPCState`; this class does the I/O.
///
/// It lives on its loop's thread: make it, use it and drop it there. It has no thread and no
/// timer of its own; the non-blocking socket is watched by the loop, and idle it costs nothing.
/// A message over 16 MiB, a message without sway's magic, a tree that is not JSON, or the socket
/// failing or closing ends it with one `.lost(reason:)`.
package final class SwayToplevelWatcher {
    /// The largest payload read (16 MiB); a larger one ends the connection.
    static let messageLimit = 16 << 20
    /// How much one read takes; at most 16 reads per readiness report, so that a busy socket
    /// does not hold the loop.
    private static let chunkSize = 64 << 10
    private static let readsPerWakeUp = 16

    private let context: LoopContext
    private let onUpdate: (ToplevelUpdate) -> Void
    /// The socket; -1 once closed.
    private var socket: Int32
    private var registration: IORegistration?
    private var reader = SwayIPCFrameReader(limit: SwayToplevelWatcher.messageLimit)
    private var state = SwayIPCState()
    /// Bytes to write, from `outgoingStart` on.
    private var outgoing: [UInt8] = []
    private var outgoingStart = 0
    private var isWatchingWritable = false
    private var chunk = [UInt8](repeating: 0, count: SwayToplevelWatcher.chunkSize)
    private var isFinished = false

    /// The process at the other end of the socket when it was connected (`SO_PEERCRED`): sway's
    /// PID; `nil` when the kernel does not tell.
    package let compositorPID: Int32?

    /// Connects to sway's IPC socket at `socketPath` (`nil`: `$SWAYSOCK`), subscribes to window
    /// and workspace events and asks for the tree.
    ///
    /// `onUpdate` is called on the loop thread, never from within this initializer: with
    /// `.windows` once the first tree is read and then on each change, and with `.lost(reason:)`
    /// once when the socket fails or closes or sway's messages cannot be read; nothing after that,
    /// nor after `stop()`.
    /// - Throws: `SwayIPCError.noSocketPath`, `.socketPathTooLong`, `.connectFailed` (with the
    ///   `errno`: `ECONNREFUSED`, `ENOENT`), `.systemCall` when no socket can be made, `.loop`
    ///   when the loop will not watch it.
    package init(
        context: LoopContext, socketPath: String?, onUpdate: @escaping (ToplevelUpdate) -> Void
    ) throws(SwayIPCError) {
        let environmentPath = getenv("SWAYSOCK").map { String(cString: $0) }
        guard let path = socketPath ?? environmentPath, !path.isEmpty else { throw .noSocketPath }
        let socket = try Self.connect(to: path)
        self.context = context
        self.onUpdate = onUpdate
        self.socket = socket
        compositorPID = Self.peerPID(of: socket)
        // The first requests wait for the loop to say the socket takes them: nothing is reported
        // from here.
        for case .send(let message) in state.handle(.start) { outgoing += message.encoded }
        do {
            registration = try context.register(fileDescriptor: socket, interest: [.readable, .writable]) { [weak self] events in
                self?.handle(events)
            }
            isWatchingWritable = true
        } catch {
            close(socket)
            self.socket = -1
            throw .loop(error)
        }
    }

    deinit {
        closeSocket()
    }

    /// Closes the connection; nothing is reported after this. Calling it again does nothing.
    package func stop() {
        isFinished = true
        closeSocket()
    }

    // MARK: Connecting

    /// A non-blocking, close-on-exec Unix stream socket connected to `path`.
    private static func connect(to path: String) throws(SwayIPCError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .socketPathTooLong(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .systemCall(operation: "socket", errno: errno) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .connectFailed(path: path, errno: code)
        }
        return fd
    }

    /// The PID of the process at the other end of `socket` (`SO_PEERCRED`'s `struct ucred`: PID,
    /// UID, GID), or `nil`.
    private static func peerPID(of socket: Int32) -> Int32? {
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.pid > 0 else { return nil }
        return credentials.pid
    }

    // MARK: Events

    private func handle(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        if !isFinished, !events.isDisjoint(with: [.readable, .hangup, .error]) {
            readAvailable(hungUp: !events.isDisjoint(with: [.hangup, .error]))
        }
    }

    /// Reads what the socket has (up to `readsPerWakeUp` chunks) and handles every complete message.
    private func readAvailable(hungUp: Bool) {
        for _ in 0..<Self.readsPerWakeUp {
            guard !isFinished else { return }
            let count = chunk.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count > 0 {
                reader.append(chunk[0..<count])
                handleMessages()
                continue
            }
            if count == 0 { return finish("sway closed its IPC connection") }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                // Told of a hang-up or an error yet nothing to read: the loop would call again at once.
                if hungUp { finish("sway's IPC connection hung up") }
                return
            case let code: return finish(SwayIPCError.systemCall(operation: "read", errno: code).description)
            }
        }
    }

    private func handleMessages() {
        while !isFinished {
            let message: SwayIPCMessage?
            do {
                message = try reader.next()
            } catch {
                return finish(error.description)
            }
            guard let message else { return }
            perform(state.handle(.received(message)))
        }
    }

    private func perform(_ actions: [SwayIPCState.Action]) {
        for action in actions {
            guard !isFinished else { return }
            switch action {
            case .send(let message): send(message)
            case .report(let windows): onUpdate(.windows(windows))
            case .fail(let reason): finish(reason)
            }
        }
    }

    // MARK: Writing

    /// Queues `message`; the loop says when the socket takes it.
    private func send(_ message: SwayIPCMessage) {
        outgoing += message.encoded
        watchWritable(true)
    }

    /// Writes what is queued, as far as the socket takes it.
    private func flush() {
        while outgoingStart < outgoing.count, !isFinished {
            let count = outgoing[outgoingStart...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                outgoingStart += count
                continue
            }
            if count == 0 { return }  // Nothing taken: wait until the loop says the socket is writable.
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            case let code: return finish(SwayIPCError.systemCall(operation: "write", errno: code).description)
            }
        }
        guard !isFinished else { return }
        outgoing.removeAll(keepingCapacity: true)
        outgoingStart = 0
        watchWritable(false)
    }

    private func watchWritable(_ writable: Bool) {
        guard writable != isWatchingWritable, let registration, !isFinished else { return }
        do {
            try context.setInterest(writable ? [.readable, .writable] : .readable, for: registration)
            isWatchingWritable = writable
        } catch {
            finish("cannot watch the sway IPC socket: \(error)")
        }
    }

    // MARK: The end

    /// Closes the connection and reports `.lost(reason:)`, once.
    private func finish(_ reason: String) {
        guard !isFinished else { return }
        isFinished = true
        closeSocket()
        onUpdate(.lost(reason: reason))
    }

    private func closeSocket() {
        if let registration {
            context.deregister(registration)
            self.registration = nil
        }
        if socket >= 0 {
            close(socket)
            socket = -1
        }
    }
}
