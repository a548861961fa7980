#if canImport(Glibc)
import Glibc
#endif
package import EpollLoop

/// Resolves a host name on a short-lived thread of its own (`getaddrinfo`), so that a name
/// server that does not answer never stalls an event loop: the MQTT link shares its loop with
/// notifybusd's D-Bus service, a fleet watcher with its signals. A client library that resolves
/// the name again when it connects (libmosquitto does, and tries each address) then finds it at
/// once: the name server answered, or a cache on the machine has it.
package enum HostLookup {
    /// Why a name did not resolve.
    package enum Failure: Error, Sendable, Hashable {
        /// `getaddrinfo` failed with `code`, an `EAI_*` value.
        case unresolved(code: Int32)
        /// No thread could be started for the lookup: `pthread_create` failed.
        case noThread(EventLoopError)

        /// `getaddrinfo`'s error in words ("Name or service not known"), or `pthread_create`'s
        /// when no thread could be started. Wraps `gai_strerror`.
        package var reason: String {
            switch self {
            case .unresolved(let code): gai_strerror(code).map { String(cString: $0) } ?? "error \(code)"
            case .noThread(let error): "\(error)"
            }
        }
    }

    /// Whether `host` is a numeric IPv4 or IPv6 address (nothing to look up). Wraps `inet_pton`.
    package static func isNumeric(_ host: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// Looks `host` up (for a stream socket) on a new thread and calls `completion` there with
    /// `nil` when it resolves, else why it does not; at once, on the calling thread, when no
    /// thread can be started. Wraps `getaddrinfo` and `pthread_create`.
    package static func resolve(_ host: String, completion: @escaping @Sendable (Failure?) -> Void) {
        let lookup: @Sendable () -> Void = {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var result: UnsafeMutablePointer<addrinfo>?
            let code = getaddrinfo(host, nil, &hints, &result)
            if let result { freeaddrinfo(result) }
            completion(code == 0 ? nil : .unresolved(code: code))
        }
        do throws(EventLoopError) {
            try startThread(lookup).detach()
        } catch {
            completion(.noThread(error))
        }
    }
}
