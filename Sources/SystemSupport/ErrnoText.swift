#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An `errno` value in words, for messages and logs.
package enum ErrnoText {
    /// The C library's words for `code`: "No such file or directory" for `ENOENT`. Wraps
    /// `strerror`.
    package static func of(_ code: Int32) -> String {
        let text: UnsafeMutablePointer<CChar>? = strerror(code)
        return text.map { String(cString: $0) } ?? "unknown error"
    }
}
