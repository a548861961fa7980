import BenchSupport
import Harness
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// An app of a run: its window's app id, the scope its processes are in, and what the compositor
/// calls its window (sway's container id; 0 where the compositor has none to give).
struct App {
    let appID: String
    let scope: AppScopes.Scope
    var containerID: UInt64 = 0
}

extension BenchBed {
    /// The `state` of every `app/<id>/lifecycle` key of the daemon, by app id.
    func lifecycleStates() throws -> [String: String] {
        var states: [String: String] = [:]
        for (key, text) in try snapshot(["app/**"]) {
            let parts = key.split(separator: "/")
            guard parts.count == 3, let value = try? JSONValue(parsing: text), let state = value["state"]?.stringValue else { continue }
            states[String(parts[1])] = state
        }
        return states
    }

    /// Waits (up to `timeoutSeconds`) until the daemon says `appID` is `state`.
    func waitForState(_ appID: String, _ state: String, timeoutSeconds: Int = 15) throws {
        for _ in 0..<(timeoutSeconds * 100) {
            portal.serve()
            if try lifecycleStates()[appID] == state { return }
            usleep(10_000)
        }
        throw HarnessError("\(appID) did not turn \(state) within \(timeoutSeconds) s\n\(daemonLog.suffix(3000))")
    }

    /// Waits (up to 15 s) until the daemon knows `apps` apps and says each is `frozen`, or
    /// `foreground` for `focused`.
    func waitForStates(apps: Int, except focused: String?) throws {
        var states: [String: String] = [:]
        for _ in 0..<300 {
            portal.serve()
            states = try lifecycleStates()
            if states.count >= apps, states.allSatisfy({ $0.value == ($0.key == focused ? "foreground" : "frozen") }) { return }
            usleep(50_000)
        }
        throw HarnessError("the apps did not settle (all frozen but \(focused ?? "none")): \(states)\n\(daemonLog.suffix(3000))")
    }

    /// Waits (up to 15 s) until the daemon has frozen `app` itself (its scope's own `cgroup.freeze`
    /// 1, `frozen 1`, the key `frozen`), then 100 ms more: the daemon has published and is idle again.
    func waitUntilFrozenByDaemon(_ app: App) throws {
        var waited = 0
        while !(app.scope.isFrozen && app.scope.isFreezeRequested), waited < 15_000 {
            portal.serve()
            usleep(5_000)
            waited += 5
        }
        guard waited < 15_000 else { throw HarnessError("notifybusd did not freeze \(app.appID) within 15 s\n\(daemonLog.suffix(3000))") }
        try waitForState(app.appID, "frozen")
        usleep(100_000)
    }
}
