import DBus
import EpollLoop
import Logging
import SystemSupport

/// Every app in reach (specification: Freezing background apps, "Every app in reach"): an app's
/// processes are its windows' (sway, kde) and the owner of the well-known name equal to its app
/// id; their cgroups are its cgroups when they are app units under the root, else the name forms
/// of its app id; and with `app-units = make`, a process in no app unit is moved into a scope of
/// its own through the user manager, once.
extension LifecycleDriver {
    /// The compositor's list changed: the policy is told of the windows and their cgroups, and
    /// apps seen for the first time may get a scope.
    func windowsChanged(_ list: [ToplevelWindow]) {
        windows = list
        tellWindows()
        placeApps()
    }

    /// What the bus knows of its connections changed: an app id's name may have another owner.
    func busPeersChanged() {
        guard !windows.isEmpty else { return }
        tellWindows()
        placeApps()
    }

    /// Tells the policy the windows as they map to cgroups now, when that changed.
    func tellWindows() {
        let next = windows.compactMap(policyWindow)
        guard next != policyWindows else { return }
        policyWindows = next
        handle(.windows(next))
    }

    /// Tells the policy a list that differs from the last one in activation alone (the same
    /// windows, app ids and processes), with the cgroups read for those windows last time;
    /// `windowsChanged` reads them again after it. Any other list is left to `windowsChanged`.
    func tellActivation(_ list: [ToplevelWindow]) {
        guard list.count == windows.count,
            zip(list, windows).allSatisfy({ $0.id == $1.id && $0.appID == $1.appID && $0.pid == $1.pid })
        else { return }
        let activated = Dictionary(list.map { ($0.id, $0.activated) }, uniquingKeysWith: { $1 })
        let next = policyWindows.map { window in
            var window = window
            window.activated = activated[window.id] ?? window.activated
            return window
        }
        guard next != policyWindows else { return }
        policyWindows = next
        handle(.windows(next))
    }

    /// The processes of `window`'s app: the window's own (where the backend gives it) and the
    /// owner of the name equal to its app id on the session bus.
    func processes(of window: ToplevelWindow, appID: String) -> [Int32] {
        var pids: [Int32] = window.pid.map { [$0] } ?? []
        if let owner = session?.peers.owner(of: appID)?.processID, !pids.contains(owner) { pids.append(owner) }
        return pids
    }

    /// The window as the policy sees it: its app's cgroups, those of its processes that are app
    /// units under the root (a process in none, or in a sub-cgroup of one, gives none); where no
    /// process of the app is known, the app units named after its app id. A window without an app
    /// id is not tracked.
    func policyWindow(_ window: ToplevelWindow) -> LifecyclePolicy.Window? {
        guard let appID = window.appID, !appID.isEmpty else { return nil }
        let pids = processes(of: window, appID: appID)
        var groups: [String] = []
        for pid in pids {
            if let group = AppUnit.group(ofProcess: pid, under: root), !groups.contains(group) { groups.append(group) }
        }
        if pids.isEmpty { groups = AppUnit.groups(of: appID, under: root, mounts: mounts) }
        return LifecyclePolicy.Window(id: window.id, appID: appID, activated: window.activated, groups: groups)
    }

    /// With `app-units = make` and a user manager on the bus: each app seen for the first time
    /// whose process is in no app unit, not protected and not in the compositor's cgroup is moved
    /// into `app-notifybus-<app-id>-<pid>.scope`.
    func placeApps() {
        guard configuration.appUnits == .make, let units = session?.units, units.hasManager else { return }
        let compositorGroup = backend?.compositorPID.flatMap { ControlGroup.group(ofProcess: $0) }
        for window in windows {
            guard let appID = window.appID, !appID.isEmpty, !appsPlaced.contains(appID) else { continue }
            for pid in processes(of: window, appID: appID) {
                guard let group = ControlGroup.group(ofProcess: pid) else { continue }
                if let last = group.split(separator: "/").last, AppUnit.isAppUnit(last) {
                    appsPlaced.insert(appID)
                    break
                }
                guard group != compositorGroup, !LifecyclePolicy.holds(group, anyOf: protectedGroups), group != "/" else { continue }
                appsPlaced.insert(appID)
                move(pid, of: appID, from: group, units: units)
                break
            }
        }
        // Bounded: apps long gone are forgotten (one of them back is placed again, if it must be).
        if appsPlaced.count > 4096 { appsPlaced.formIntersection(windows.compactMap(\.appID)) }
    }

    private func move(_ pid: Int32, of appID: String, from group: String, units: SystemdUnits) {
        let name = AppUnit.madeScopeName(appID: appID, pid: pid)
        logger.info("lifecycle: moving \(appID)'s process \(pid) from \(group) into \(name)")
        units.startScope(name, pid: UInt32(bitPattern: pid)) { [weak self] result in
            guard let self, !self.stopped else { return }
            if case .failure(let error) = result {
                self.logger.warning("lifecycle: cannot move \(appID)'s process \(pid) into \(name): \(error)")
                return
            }
            self.awaitMove(pid, into: name, checks: 100)
        }
    }

    /// The manager's answer may come before the process is in its new cgroup: it is read again
    /// every 10 ms (at most `checks` times); once there, the daemon's follower and the policy
    /// read the cgroups again.
    private func awaitMove(_ pid: Int32, into name: String, checks: Int) {
        if let timer = moves.removeValue(forKey: pid) { context.cancelTimer(timer) }
        let group = ControlGroup.group(ofProcess: pid)
        guard let group, !group.hasSuffix("/" + name), checks > 0 else {
            if group?.hasSuffix("/" + name) == true { logger.debug("lifecycle: process \(pid) is in \(group ?? name)") }
            afterMove()
            tellWindows()
            return
        }
        moves[pid] = context.scheduleTimer(after: .milliseconds(10)) { [weak self] in
            self?.moves[pid] = nil
            self?.awaitMove(pid, into: name, checks: checks - 1)
        }
    }
}
