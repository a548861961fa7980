import CMosquitto

#if canImport(Glibc)
import Glibc
#endif

/// A libmosquitto call that failed: which one, its error code, and the reason in words.
public struct MosquittoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The libmosquitto function, e.g. `mosquitto_connect_async`.
    package var operation: String
    /// Its `mosq_err_t` code.
    package var code: Int32
    /// What went wrong: `mosquitto_strerror`, or `strerror(errno)` for `MOSQ_ERR_ERRNO`.
    package var reason: String

    /// An error of `operation` with `code`; the reason from libmosquitto (and `errno` where the
    /// code says so). Read `errno` right after the failing call.
    package init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
        self.reason = Self.reason(for: code)
    }

    /// An error with a reason of its own.
    package init(operation: String, code: Int32, reason: String) {
        self.operation = operation
        self.code = code
        self.reason = reason
    }

    /// Whether the error is about what was asked (a topic or payload the broker or libmosquitto
    /// cannot take: the same request would fail on any connection) rather than the connection.
    package var isAboutTheRequest: Bool {
        let codes: [mosq_err_t] = [
            MOSQ_ERR_INVAL, MOSQ_ERR_PAYLOAD_SIZE, MOSQ_ERR_MALFORMED_UTF8, MOSQ_ERR_QOS_NOT_SUPPORTED,
            MOSQ_ERR_OVERSIZE_PACKET, MOSQ_ERR_RETAIN_NOT_SUPPORTED, MOSQ_ERR_TOPIC_ALIAS_INVALID,
        ]
        return codes.contains { Int32($0.rawValue) == code }
    }

    /// The error in words: `mosquitto_connect_async: Connection refused`.
    public var description: String { "\(operation): \(reason)" }

    /// The words for a `mosq_err_t` code (`strerror(errno)` for `MOSQ_ERR_ERRNO`). Wraps
    /// `mosquitto_strerror`.
    static func reason(for code: Int32) -> String {
        if code == Int32(MOSQ_ERR_ERRNO.rawValue) {
            let saved = errno
            if saved != 0 { return systemReason(saved) }
        }
        if code == Int32(MOSQ_ERR_EAI.rawValue) {
            let saved = errno
            if let text = gai_strerror(saved) { return "cannot resolve the broker's host name: \(String(cString: text))" }
            return "cannot resolve the broker's host name"
        }
        guard let text = mosquitto_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The words for an `errno` value. Wraps `strerror`.
    static func systemReason(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
