#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This machine's name: a host's default topic level on MQTT, and part of a fleet watcher's
/// client identifier.
package enum HostName {
    /// The host name, or `localhost` when it has none. Wraps `gethostname`.
    package static var current: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0, buffer[0] != 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
