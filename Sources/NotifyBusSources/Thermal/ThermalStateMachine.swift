/// The thermal source as a plain state: each zone's level, what power-profiles-daemon says, and
/// the level published. Every event returns the actions to carry out, in order; `ThermalWatcher`
/// carries them out (publishing, status, the re-read timer). No udev, bus or timer of its own:
/// tests drive it directly.
///
/// The rules it keeps (specification: Source keys and values):
/// - `thermal/state` is the worst of the zones' levels and of `PerformanceDegraded`'s floor
///   (`serious` for `high-operating-temperature`), `nominal` with neither.
/// - Nothing is published until both are known (the zones scanned, and the daemon read or known
///   absent), then the state, then `running`: a subscriber starting at `running` has it.
/// - The daemon no longer counts once it leaves (or the bus goes).
/// - Zones are read again every re-read period while at least one zone exists, and only then.
struct ThermalStateMachine: Sendable {
    /// What is known of power-profiles-daemon's `PerformanceDegraded`.
    enum Daemon: Hashable, Sendable {
        /// Not known yet (connecting, its owner or its properties on their way).
        case unknown
        /// Not running, or not reachable: it does not count.
        case absent
        /// Its `PerformanceDegraded` (empty when it has none).
        case degraded(String)
    }

    /// What the watcher does, in the order given.
    enum Action: Hashable, Sendable {
        /// Publish `thermal/state` (if it differs from the bus's value).
        case publish(ThermalLevel)
        /// Report `running`.
        case reportRunning
        /// Start reading every zone again each period.
        case startRereadTimer
        /// Stop the periodic re-reads: no zone is left.
        case stopRereadTimer
    }

    /// The zones that exist, by name, with their level (`nil`: present but unreadable).
    private(set) var zones: [String: ThermalLevel?] = [:]
    /// Whether the zones were scanned once.
    private(set) var zonesScanned = false
    private(set) var daemon = Daemon.unknown
    /// The level last published; `nil` before the first.
    private(set) var published: ThermalLevel?
    private var rereading = false

    /// The level now, from what is known.
    var level: ThermalLevel {
        let zoneLevel = zones.values.compactMap { $0 }.max() ?? .nominal
        guard case .degraded(let reasons) = daemon else { return zoneLevel }
        return max(zoneLevel, ThermalLevel.floor(performanceDegraded: reasons))
    }

    /// Every zone was read (at start, on the timer, after lost uevents, on `reread()`): zones
    /// not in `found` are gone.
    mutating func zonesRead(_ found: [String: ThermalLevel?]) -> [Action] {
        zones = found
        zonesScanned = true
        return update()
    }

    /// A uevent told of one zone (`add`, `change`): its level now (`nil`: unreadable).
    mutating func zoneRead(_ name: String, _ level: ThermalLevel?) -> [Action] {
        zones[name] = .some(level)
        return update()
    }

    /// A zone was removed.
    mutating func zoneRemoved(_ name: String) -> [Action] {
        zones[name] = nil
        return update()
    }

    /// power-profiles-daemon was read, left, or turned out absent.
    mutating func daemonChanged(_ daemon: Daemon) -> [Action] {
        self.daemon = daemon
        return update()
    }

    /// Publishes the level once both halves are known (then `running`, the first time), and
    /// starts or stops the re-reads as zones come and go.
    private mutating func update() -> [Action] {
        var actions: [Action] = []
        if !zones.isEmpty, !rereading {
            rereading = true
            actions.append(.startRereadTimer)
        } else if zones.isEmpty, rereading {
            rereading = false
            actions.append(.stopRereadTimer)
        }
        guard zonesScanned, daemon != .unknown else { return actions }
        let level = self.level
        let first = published == nil
        if level != published {
            published = level
            actions.append(.publish(level))
        }
        if first { actions.append(.reportRunning) }
        return actions
    }
}
