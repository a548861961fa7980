#if canImport(Glibc)
import Glibc
#endif

/// The few services of the C library notifywatch needs besides its sources and
/// `SystemSupport`: sleeping, the environment and the host's name.
enum Posix {
    /// Sleeps for `seconds`, resuming after a signal until the time is up.
    static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        let whole = seconds.rounded(.down)
        var request = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Whether the environment has `name`, empty or not.
    static func hasEnvironment(_ name: String) -> Bool { getenv(name) != nil }
}

extension String {
    /// This text followed by spaces up to `length` UTF-16 code units (as `NSString`'s
    /// `padding(toLength:withPad:startingAt:)` measures); text already that long is kept whole.
    func padded(toUTF16Length length: Int) -> String {
        let missing = length - utf16.count
        return missing > 0 ? self + String(repeating: " ", count: missing) : self
    }
}
