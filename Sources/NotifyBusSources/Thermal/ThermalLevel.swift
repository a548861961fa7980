/// the specification's (Source keys and values) `thermal/state`, in rising order (its `Comparable` order is the order of the
/// cases): iOS's `ProcessInfo.ThermalState`.
public enum ThermalLevel: Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// No zone near a trip point, and the daemon not degraded for temperature.
    case nominal
    /// A zone within 10 °C below its lowest passive trip.
    case fair
    /// A zone at or above its lowest passive trip (the kernel throttles), or
    /// power-profiles-daemon degraded for `high-operating-temperature`.
    case serious
    /// A zone at or above a `hot` or `critical` trip.
    case critical

    /// The value of `thermal/state`: `"nominal"`, `"fair"`, `"serious"` or `"critical"`.
    public var description: String {
        switch self {
        case .nominal: "nominal"
        case .fair: "fair"
        case .serious: "serious"
        case .critical: "critical"
        }
    }

    /// The level power-profiles-daemon's `PerformanceDegraded` asks for (a comma-separated list of
    /// reasons, or empty): at least `serious` when it names `high-operating-temperature`, else
    /// `nominal` (it does not count).
    public static func floor(performanceDegraded reasons: String) -> ThermalLevel {
        let named = reasons.split(separator: ",").map { String($0).sysfsTrimmed }
        return named.contains("high-operating-temperature") ? .serious : .nominal
    }
}
