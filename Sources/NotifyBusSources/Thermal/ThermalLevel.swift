/// CONTRACT.md §1's `thermal/state`, in rising order: iOS's `ProcessInfo.ThermalState`.
public enum ThermalLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case nominal, fair, serious, critical

    /// The value of `thermal/state`: `"nominal"`, `"fair"`, `"serious"` or `"critical"`.
    public var description: String {
        switch self {
        case .nominal: "nominal"
        case .fair: "fair"
        case .serious: "serious"
        case .critical: "critical"
        }
    }

    public static func < (a: ThermalLevel, b: ThermalLevel) -> Bool { a.rawValue < b.rawValue }

    /// The level power-profiles-daemon's `PerformanceDegraded` asks for (a comma-separated list of
    /// reasons, or empty): at least `serious` when it names `high-operating-temperature`, else
    /// `nominal` (it does not count).
    public static func floor(performanceDegraded reasons: String) -> ThermalLevel {
        let named = reasons.split(separator: ",").map { String($0).sysfsTrimmed }
        return named.contains("high-operating-temperature") ? .serious : .nominal
    }
}
