import CMosquitto
public import EpollLoop

#if canImport(Glibc)
import Glibc
#endif

/// One MQTT connection attempt and the connection it becomes: a `struct mosquitto *` driven by
/// the project's epoll loop, with no thread of its own (no `mosquitto_loop_start`).
///
/// Its socket (`mosquitto_socket`) is a loop registration, readable always and writable while
/// libmosquitto has something to send (`mosquitto_want_write`); incoming data goes through
/// `mosquitto_loop_read`, outgoing through `mosquitto_loop_write`, and one loop timer calls
/// `mosquitto_loop_misc` when the keepalive falls due, so that a connected idle client wakes
/// once per keepalive interval and for nothing else.
///
/// libmosquitto's callbacks (connect, disconnect, publish acknowledged, message) are collected
/// while it runs and handed to `onEvent` after it returns, so the handler may publish, subscribe,
/// disconnect or close the client without re-entering the library.
///
/// A client connects once. After `.refused` or `.disconnected` it is spent: close it and make a
/// new one to connect again (then nothing libmosquitto queued for the old connection is re-sent
/// behind the caller's back: what to re-send is the caller's decision).
///
/// Lives on the loop thread only; `close()` (also run by `deinit`) destroys the C object.
public final class MosquittoClient {
    /// What the connection reports.
    public enum Event: Sendable, Hashable {
        /// The broker accepted the connection (CONNACK 0); `sessionPresent` is the CONNACK flag
        /// saying it kept the session of an earlier connection.
        case connected(sessionPresent: Bool)
        /// The broker refused the connection (a CONNACK with an error) or did not answer it
        /// within the connect timeout, with its reason. `unsupportedVersion` when the broker
        /// refused the protocol version (a 3.1.1 broker's CONNACK 1 to MQTT 5, or an MQTT 5
        /// broker's "unsupported protocol version"), or when it took the connection and left an
        /// MQTT 5 CONNECT unanswered, as brokers that predate MQTT 5 may.
        case refused(reason: String, unsupportedVersion: Bool)
        /// The connection ended (or never came up): `nil` after `disconnect()`, else why.
        case disconnected(reason: String?)
        /// The broker acknowledged the QoS 1 or 2 publish `messageID` (`reasonCode` ≥ 128: MQTT 5
        /// broker refused it).
        case acknowledged(messageID: Int32, reasonCode: Int32)
        /// A message of a subscription.
        case message(MosquittoMessage)
    }

    /// The configuration it connects with.
    package let configuration: MosquittoConfiguration
    /// The libmosquitto client, `struct mosquitto *`.
    let handle: OpaquePointer
    unowned let context: LoopContext
    private let onEvent: (Event) -> Void
    private var registration: IORegistration?
    private var registeredDescriptor: Int32 = -1
    private var watchingWrites = false
    private var keepaliveTimer: LoopTimer?
    /// The keepalive interval in force: the configuration's, or an MQTT 5 broker's Server Keep
    /// Alive from its CONNACK (libmosquitto adopts it too).
    var keepalive: Int
    private var connectTimer: LoopTimer?
    private var lastRead = ContinuousClock.now
    private var lastWrite = ContinuousClock.now
    var pending: [Event] = []
    private var delivering = false
    /// The last error libmosquitto logged (an OpenSSL error, say), to explain a disconnection.
    var lastLoggedError: String?
    /// What the last failing loop call said.
    private var lastFailure: String?
    /// Whether `.disconnected` was delivered.
    private var reportedEnd = false
    /// Whether the connection is up (between `.connected` and `.disconnected`).
    public private(set) var isConnected = false
    /// Whether `close()` ran.
    package private(set) var isClosed = false

    /// Makes the client and applies `configuration` (protocol, credentials, TLS, will); nothing
    /// is sent before `connect()`. Wraps `mosquitto_new`, `mosquitto_int_option`,
    /// `mosquitto_username_pw_set`, `mosquitto_tls_set` and `mosquitto_will_set`.
    /// - Throws: `MosquittoError` naming the call that refused a setting (a TLS file that cannot
    ///   be read, say).
    public init(
        configuration: MosquittoConfiguration, context: LoopContext, onEvent: @escaping (Event) -> Void
    ) throws(MosquittoError) {
        _ = Self.libraryInitialized
        guard let handle = mosquitto_new(configuration.clientID, configuration.cleanSession, nil) else {
            throw MosquittoError(operation: "mosquitto_new", code: Int32(MOSQ_ERR_NOMEM.rawValue), reason: "out of memory")
        }
        self.handle = handle
        self.configuration = configuration
        self.context = context
        self.onEvent = onEvent
        keepalive = configuration.keepalive
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        do {
            try apply(configuration)
        } catch {
            isClosed = true
            mosquitto_destroy(handle)
            throw error
        }
        installCallbacks()
    }

    deinit { close() }

    /// `mosquitto_lib_init`, run once, before the first client is made.
    private static let libraryInitialized: Void = { _ = mosquitto_lib_init() }()

    /// Starts connecting without blocking on the TCP handshake; the outcome comes as `.connected`,
    /// `.refused` or `.disconnected`. Resolving the host name (`getaddrinfo`) does block. Wraps
    /// `mosquitto_connect_async`.
    /// - Throws: `MosquittoError` when the attempt fails at once (connection refused on this
    ///   host, a name that does not resolve).
    public func connect() throws(MosquittoError) {
        guard !isClosed else { throw closedError("mosquitto_connect_async") }
        errno = 0
        let code = mosquitto_connect_async(handle, configuration.host, Int32(configuration.port), Int32(configuration.keepalive))
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            var error = MosquittoError(operation: "mosquitto_connect_async", code: code)
            // A TLS handshake can fail within the call (on loopback): OpenSSL's reason was logged.
            if let logged = lastLoggedError { error.reason += " (\(logged))" }
            throw error
        }
        lastRead = .now
        lastWrite = .now
        scheduleKeepalive()
        connectTimer = context.scheduleTimer(after: configuration.connectTimeout) { [weak self] in self?.connectTimedOut() }
        synchronize()
    }

    /// No CONNACK within the connect timeout: the attempt is over.
    private func connectTimedOut() {
        connectTimer = nil
        guard !isClosed, !isConnected, !reportedEnd else { return }
        let seconds = configuration.connectTimeout.components.seconds
        // Only a broker that took the connection and left CONNECT unanswered may be one that
        // predates MQTT 5; a connection that never came up says nothing of the version.
        let established = isEstablished(mosquitto_socket(handle))
        let reason = established
            ? "no answer to MQTT \(configuration.protocolVersion.rawValue) CONNECT within \(seconds) s"
            : "no connection within \(seconds) s"
        pending.append(.refused(reason: reason, unsupportedVersion: established && configuration.protocolVersion == .v5))
        synchronize()
    }

    /// Queues a publish and writes what the socket takes now. Wraps `mosquitto_publish`.
    /// - Returns: its message ID, which `.acknowledged` names for QoS 1 and 2.
    /// - Throws: `MosquittoError`: not connected, a topic that is not valid UTF-8 or has
    ///   wildcards, a payload too large.
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int32, retain: Bool) throws(MosquittoError) -> Int32 {
        guard !isClosed else { throw closedError("mosquitto_publish") }
        var messageID: Int32 = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress, qos, retain)
        }
        lastWrite = .now
        synchronize()
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { throw MosquittoError(operation: "mosquitto_publish", code: code) }
        return messageID
    }

    /// Subscribes to `filter` (MQTT wildcards allowed). Wraps `mosquitto_subscribe`.
    public func subscribe(_ filter: String, qos: Int32) throws(MosquittoError) {
        guard !isClosed else { throw closedError("mosquitto_subscribe") }
        let code = mosquitto_subscribe(handle, nil, filter, qos)
        lastWrite = .now
        synchronize()
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { throw MosquittoError(operation: "mosquitto_subscribe", code: code) }
    }

    /// Sends DISCONNECT (the broker then drops the will); `.disconnected(reason: nil)` follows once
    /// it is written. Wraps `mosquitto_disconnect`.
    package func disconnect() {
        guard !isClosed else { return }
        _ = mosquitto_disconnect(handle)
        synchronize()
    }

    /// Stops watching the socket and destroys the C object (closing the socket); no event is
    /// delivered after this. Wraps `mosquitto_destroy`.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        isConnected = false
        if let registration { context.deregister(registration) }
        registration = nil
        registeredDescriptor = -1
        if let keepaliveTimer { context.cancelTimer(keepaliveTimer) }
        keepaliveTimer = nil
        cancelConnectTimer()
        pending = []
        mosquitto_destroy(handle)
    }

    private func closedError(_ operation: String) -> MosquittoError {
        MosquittoError(operation: operation, code: Int32(MOSQ_ERR_INVAL.rawValue), reason: "the client is closed")
    }

    // MARK: The loop

    /// Handles readiness of the socket: reads (which also drives a TLS handshake, whichever way
    /// it waits), then writes what is queued.
    private func handle(_ events: IOEvents) {
        guard !isClosed else { return }
        let descriptor = registeredDescriptor
        note(mosquitto_loop_read(handle, 1))
        lastRead = .now
        if !isClosed, mosquitto_socket(handle) >= 0, mosquitto_want_write(handle) {
            note(mosquitto_loop_write(handle, 1))
            lastWrite = .now
        }
        // A hangup libmosquitto did not notice (it waits for a connection, say) would be
        // reported again at once: end the connection here.
        if !isClosed, !events.isDisjoint(with: [.error, .hangup]), mosquitto_socket(handle) == descriptor {
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
            let reason = code != 0 ? MosquittoError.systemReason(code) : "the connection was closed"
            if let registration { context.deregister(registration) }
            registration = nil
            registeredDescriptor = -1
            isConnected = false
            pending.append(.disconnected(reason: reason))
        }
        synchronize()
    }

    /// The keepalive timer: due when neither side has sent for a keepalive interval (plus a
    /// second, libmosquitto counting whole seconds); `mosquitto_loop_misc` then sends PINGREQ,
    /// or ends a connection whose broker did not answer the last one.
    private func scheduleKeepalive() {
        if let keepaliveTimer { context.cancelTimer(keepaliveTimer) }
        keepaliveTimer = nil
        guard keepalive > 0 else { return }  // a broker's Server Keep Alive of 0: no pings
        let due = min(lastRead, lastWrite) + .seconds(keepalive) + .seconds(1)
        keepaliveTimer = context.scheduleTimer(after: max(.zero, due - .now)) { [weak self] in self?.keepaliveDue() }
    }

    private func keepaliveDue() {
        keepaliveTimer = nil
        guard !isClosed else { return }
        let due = min(lastRead, lastWrite) + .seconds(keepalive) + .seconds(1)
        if ContinuousClock.now >= due {
            note(mosquitto_loop_misc(handle))
            // A PINGREQ went out, and libmosquitto counts from now for its answer.
            lastRead = .now
            lastWrite = .now
        }
        if mosquitto_socket(handle) >= 0 { scheduleKeepalive() }
        synchronize()
    }

    /// Keeps what a loop call's error code says, for a connection that ends without a callback.
    private func note(_ code: Int32) {
        guard code != Int32(MOSQ_ERR_SUCCESS.rawValue) else { return }
        var reason = MosquittoError.reason(for: code)
        if let logged = lastLoggedError { reason += " (\(logged))" }
        lastFailure = reason
    }

    /// After every call into libmosquitto: follows its socket (a new one per connection, none
    /// once closed), watches for writability while it wants to write, and hands over the events
    /// its callbacks collected.
    func synchronize() {
        guard !isClosed else { return }
        let descriptor = mosquitto_socket(handle)
        // libmosquitto closes the socket of a failed TLS handshake without a disconnect callback:
        // a connection whose socket went away has ended, whether it said so or not.
        if descriptor < 0, registeredDescriptor >= 0, !reportedEnd,
           !pending.contains(where: { if case .disconnected = $0 { true } else { false } })
        {
            pending.append(.disconnected(reason: lastFailure ?? lastLoggedError ?? "the connection was closed"))
        }
        if descriptor != registeredDescriptor {
            if let registration { context.deregister(registration) }
            registration = nil
            registeredDescriptor = -1
            if descriptor >= 0 {
                watchingWrites = mosquitto_want_write(handle)
                let interest: IOEvents = watchingWrites ? [.readable, .writable] : .readable
                do {
                    registration = try context.register(fileDescriptor: descriptor, interest: interest) { [weak self] events in
                        self?.handle(events)
                    }
                    registeredDescriptor = descriptor
                } catch {
                    pending.append(.disconnected(reason: "cannot watch the socket: \(error)"))
                }
            }
        } else if let registration {
            let wantsWrite = mosquitto_want_write(handle)
            if wantsWrite != watchingWrites {
                watchingWrites = wantsWrite
                try? context.setInterest(wantsWrite ? [.readable, .writable] : .readable, for: registration)
            }
        }
        if descriptor < 0, let keepaliveTimer {
            context.cancelTimer(keepaliveTimer)
            self.keepaliveTimer = nil
        }
        deliverPending()
    }

    /// Whether `descriptor` is a connected socket (`getpeername` succeeds).
    private func isEstablished(_ descriptor: Int32) -> Bool {
        guard descriptor >= 0 else { return false }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) == 0 }
        }
    }

    private func cancelConnectTimer() {
        if let connectTimer { context.cancelTimer(connectTimer) }
        connectTimer = nil
    }

    private func deliverPending() {
        guard !delivering else { return }
        delivering = true
        defer { delivering = false }
        while !isClosed, !pending.isEmpty {
            let event = pending.removeFirst()
            switch event {
            case .connected:
                isConnected = true
                cancelConnectTimer()
                if keepalive != configuration.keepalive { scheduleKeepalive() }
            case .disconnected:
                isConnected = false
                reportedEnd = true
                cancelConnectTimer()
            case .refused:
                isConnected = false
                cancelConnectTimer()
            case .acknowledged, .message: break
            }
            onEvent(event)
        }
    }
}

@available(*, unavailable, message: "a MosquittoClient stays on its loop thread")
extension MosquittoClient: Sendable {}
