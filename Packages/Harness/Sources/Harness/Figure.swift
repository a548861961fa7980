/// How a report writes a figure: decimals without Foundation, times in their unit, ratios, and
/// whether a goal was met.
public enum Figure {
    /// `value` rounded to `places` decimals (`decimal(2.25, places: 1)` is `2.3`, `-0.25` is `-0.3`).
    public static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "–" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((value * scale).rounded())
        let whole = scaled / Int64(scale), fraction = abs(scaled % Int64(scale))
        let sign = scaled < 0 && whole == 0 ? "-" : ""
        guard places > 0 else { return "\(whole)" }
        let digits = String(fraction)
        return "\(sign)\(whole)." + String(repeating: "0", count: places - digits.count) + digits
    }

    /// Nanoseconds as microseconds: `12.3 µs`.
    public static func microseconds(_ nanoseconds: Int64, places: Int = 1) -> String {
        decimal(Double(nanoseconds) / 1000, places: places) + " µs"
    }

    /// Nanoseconds as milliseconds: `1.23 ms`.
    public static func milliseconds(_ nanoseconds: Int64, places: Int = 2) -> String {
        decimal(Double(nanoseconds) / 1_000_000, places: places) + " ms"
    }

    /// Nanoseconds as seconds: `1.234 s`.
    public static func seconds(_ nanoseconds: Int64, places: Int = 3) -> String {
        decimal(Double(nanoseconds) / 1e9, places: places) + " s"
    }

    /// A duration in milliseconds: `1.23 ms`.
    public static func milliseconds(_ duration: Duration, places: Int = 2) -> String {
        milliseconds(Samples.nanoseconds(duration), places: places)
    }

    /// A duration in seconds: `1.234 s`.
    public static func seconds(_ duration: Duration, places: Int = 3) -> String {
        seconds(Samples.nanoseconds(duration), places: places)
    }

    /// `ours / anchor` as `1.23×`; `–` when the anchor is 0.
    public static func ratio(_ ours: Double, _ anchor: Double, places: Int = 2) -> String {
        anchor == 0 ? "–" : decimal(ours / anchor, places: places) + "×"
    }

    /// `ours / anchor` as `1.23×`; `–` when the anchor is 0.
    public static func ratio(_ ours: Int64, _ anchor: Int64, places: Int = 2) -> String {
        ratio(Double(ours), Double(anchor), places: places)
    }

    /// `met`, or `**missed**`.
    public static func verdict(_ met: Bool) -> String { met ? "met" : "**missed**" }
}
