/// What a source is doing, for a CLI or an app to show (specification: notifywatch output, the `source` line).
///
/// No hardware and no access are normal conditions, reported as `unavailable`, not errors:
/// a desktop without a battery runs the power source happily with nothing to publish.
public enum SourceStatus: Sendable, Hashable, CustomStringConvertible {
    /// Watching, and publishing what it sees.
    case running
    /// Working as designed, but with nothing to watch or no access, e.g. "no power_supply devices".
    case unavailable(reason: String)
    /// On its way to `running` (connecting, claiming sensors): it has not published its state yet.
    /// A CLI waits past it; the specification has no such status, so it is shown as `unavailable`.
    case starting(reason: String)
    /// Stopped by an unexpected error; the reason says which call failed and why.
    case failed(reason: String)

    /// What a source reports before its `run()` has looked at anything.
    public static let notStarted = SourceStatus.starting(reason: "not started")

    /// Whether the source is past starting: running, or found it cannot run.
    public var isSettled: Bool {
        if case .starting = self { return false }
        return true
    }

    /// `"running"`, `"unavailable"` or `"failed"`, as the specification's `source` line prints it.
    public var name: String {
        switch self {
        case .running: "running"
        case .unavailable, .starting: "unavailable"
        case .failed: "failed"
        }
    }

    /// The reason, for `unavailable` and `failed`; `nil` when running.
    public var reason: String? {
        switch self {
        case .running: nil
        case .unavailable(let reason), .starting(let reason), .failed(let reason): reason
        }
    }

    /// `running`, or the name and the reason, e.g. `unavailable: no power_supply devices`.
    public var description: String {
        reason.map { "\(name): \($0)" } ?? name
    }
}
