#if canImport(Glibc)
import Glibc
#endif

/// Resolves a broker's host name on a short-lived thread of its own (`getaddrinfo`), so that a
/// name server that does not answer never stalls the loop the link shares with notifybusd's
/// D-Bus service (or a watcher's signals): libmosquitto resolves the name again when it connects
/// (and tries each address), at once when this lookup found it (the name server answers, or a
/// cache on the machine has it).
enum HostLookup {
    /// Why a name did not resolve, in words.
    struct Failure: Error, Sendable {
        var reason: String
    }

    /// Whether `host` is a numeric IPv4 or IPv6 address (nothing to look up).
    static func isNumeric(_ host: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// Looks `host` up on a new thread and calls `completion` there with `nil` when it resolves,
    /// else the reason it does not.
    static func resolve(_ host: String, completion: @escaping @Sendable (Failure?) -> Void) {
        let job = LookupJob {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var result: UnsafeMutablePointer<addrinfo>?
            let code = getaddrinfo(host, nil, &hints, &result)
            if let result { freeaddrinfo(result) }
            if code == 0 {
                completion(nil)
            } else {
                let reason = gai_strerror(code).map { String(cString: $0) } ?? "error \(code)"
                completion(Failure(reason: "cannot resolve the broker's host name \(host): \(reason)"))
            }
        }
        let argument = Unmanaged.passRetained(job).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { argument in
            if let argument { Unmanaged<LookupJob>.fromOpaque(argument).takeRetainedValue().run() }
            return nil
        }, argument)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<LookupJob>.fromOpaque(argument).release()
            completion(Failure(reason: "cannot start a thread to resolve \(host): errno \(started)"))
        }
    }
}

/// The work of one lookup thread, boxed to pass through `pthread_create`'s `void *`.
private final class LookupJob: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func run() { body() }
}
