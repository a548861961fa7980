#if canImport(Glibc)
import Glibc
#endif
import NotifyBus
import SystemSupport

/// The human output of notifywatch: aligned columns, marked lifecycle lines,
/// colour only when asked (on a terminal).
struct HumanFormat {
    var color: Bool
    /// Show the subscriber column (when there is more than one subscriber).
    var showSubscriber: Bool
    /// Wall-clock time of `t = 0`, to print local times; `nil` prints `+seconds`.
    var origin: WallTime?
    var keyWidth = 28
    var subscriberWidth = 10

    func format(seconds: Double, subscriber: String, event: SubscriptionEvent) -> String {
        var line = paint(timeColumn(seconds), "2") + "  "
        if showSubscriber { line += pad(subscriber, subscriberWidth) + "  " }
        switch event {
        case .notification(let n):
            line += paint(pad(n.key, keyWidth), "1") + "  " + n.value.jsonText
            if n.kind != .live {
                switch n.kind {
                case .initial: line += "  " + paint("(current)", "2")
                case .resync: line += "  " + paint("(current, resync)", "2")
                default: line += "  " + paint("×\(n.coalesced)", "33")
                }
                if let previous = n.previous { line += "  " + paint("was \(previous.jsonText)", "2") }
            }
        case .suspended:
            line += paint("⏸ suspended — holding notifications", "36")
        case .resumed(_, let flushed):
            line += paint("▶ resumed — \(flushed) flushed", "36")
        case .resync(_, let reason):
            line += paint("⟳ resync (\(reason.rawValue)) — every current value follows", "35")
        }
        return line
    }

    func timeColumn(_ seconds: Double) -> String {
        if let origin {
            return LocalTime(origin.advanced(bySeconds: seconds)).clock
        }
        let text = "+" + threeDecimals(seconds)
        return String(repeating: " ", count: max(0, 10 - text.count)) + text
    }

    func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    func paint(_ s: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s
    }
}

/// `value` with three decimals, as `String(format: "%.3f", value)` (the C library's rounding).
func threeDecimals(_ value: Double) -> String {
    var buffer = [CChar](repeating: 0, count: 512)
    let count = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.3f", $0) }
    guard count >= 0 else { return "" }
    return String(decoding: buffer[0..<min(Int(count), buffer.count - 1)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
