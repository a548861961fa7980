import EpollLoop
import Logging
import SystemSupport

/// Carries out the policy's freezes and thaws on the loop thread: the state file first, then the
/// freeze (by the systemd user manager where it knows the unit, else the cgroup's own
/// `cgroup.freeze`), and `cgroup.events` watched with inotify until the kernel says `frozen`.
///
/// It thaws only what it froze: a cgroup whose own `cgroup.freeze` already reads 1 is reported
/// not frozen (someone else's), never written, never listed.
final class CgroupFreezer {
    /// How a freeze or a thaw is written: `true` to freeze. Calls back once with `nil` on
    /// success or the error in words.
    typealias Writer = (_ group: String, _ directory: String, _ freeze: Bool, _ done: @escaping (String?) -> Void) -> Void

    private let mounts: [CgroupMount]
    private let stateFile: FrozenStateFile
    private let logger: Logger
    private var inotify: InotifyWatches?
    /// The cgroups listed in the state file: frozen or being frozen by the policy.
    private(set) var listed: Set<String> = []
    /// The watched `cgroup.events` files and their cgroups.
    private var watched: [String: String] = [:]
    /// What the policy is told: `cgroup.events` read (`frozen` 1 or 0), or a freeze that did
    /// not happen (`failed`: it could not be written; else someone else froze the cgroup).
    var onFrozen: (String, Bool) -> Void = { _, _ in }
    var onNotFrozen: (String, _ failed: Bool) -> Void = { _, _ in }
    /// Writes freezes and thaws; by default the cgroup's own `cgroup.freeze`.
    var writer: Writer = { _, directory, freeze, done in done(CgroupFreezer.write(freeze, in: directory)) }
    /// Told of each cgroup `thawAllNow()` thawed by writing its file (systemd may be told too).
    var onThawedNow: (String) -> Void = { _ in }

    /// Writes `1` (`freeze`) or `0` to `cgroup.freeze` in `directory`; `nil` on success, else
    /// the error in words.
    static func write(_ freeze: Bool, in directory: String) -> String? {
        SmallFile.write(freeze ? "1" : "0", toExisting: directory + "/cgroup.freeze").map { "\($0)" }
    }

    /// A freezer on `context`'s loop.
    /// - Throws: `EventLoopError` when inotify cannot be used.
    init(context: LoopContext, mounts: [CgroupMount], stateFile: FrozenStateFile, logger: Logger) throws(EventLoopError) {
        self.mounts = mounts
        self.stateFile = stateFile
        self.logger = logger
        inotify = try InotifyWatches(context: context) { [weak self] event in self?.inotifyEvent(event) }
    }

    /// Why the freezer cannot work here, if it cannot: no cgroup2 mount, or the state file
    /// cannot be written.
    func problem() -> String? {
        if mounts.isEmpty { return "no writable cgroup v2" }
        return stateFile.write(listed.sorted())
    }

    /// Freezes `group`: listed, written, watched; `onFrozen` follows when the kernel says so.
    func freeze(_ group: String) {
        guard let directory = CgroupMount.directory(ofGroup: group, in: mounts) else {
            logger.warning("lifecycle: \(group) is under no cgroup2 mount: not frozen")
            onNotFrozen(group, true)
            return
        }
        if SmallFile.text(of: directory + "/cgroup.freeze", limit: 16)?.hasPrefix("1") == true {
            logger.info("lifecycle: \(group) is frozen by someone else: left alone")
            onNotFrozen(group, false)
            return
        }
        listed.insert(group)
        if let error = stateFile.write(listed.sorted()) {
            listed.remove(group)
            logger.error("lifecycle: \(error): \(group) not frozen")
            onNotFrozen(group, true)
            return
        }
        let events = directory + "/cgroup.events"
        if let error = inotify?.add(events) {
            logger.warning("lifecycle: cannot watch \(events) (errno \(error)): not frozen")
            unlist(group)
            onNotFrozen(group, true)
            return
        }
        watched[events] = group
        writer(group, directory, true) { [weak self] error in
            guard let self else { return }
            if let error {
                logger.warning("lifecycle: cannot freeze \(group): \(error)")
                onNotFrozen(group, true)
                return
            }
            // The kernel may have said so already (an ancestor frozen), before the watch saw it.
            if read(events) == true { onFrozen(group, true) }
        }
    }

    /// Thaws `group` if it is listed, and takes it out of the list.
    func thaw(_ group: String) {
        guard listed.contains(group) else { return }
        let directory = CgroupMount.directory(ofGroup: group, in: mounts)
        let events = directory.map { $0 + "/cgroup.events" }
        if let events, watched.removeValue(forKey: events) != nil { inotify?.remove(events) }
        guard let directory else {
            unlist(group)
            return
        }
        writer(group, directory, false) { [weak self] error in
            guard let self else { return }
            if let error, SmallFile.isReadable(directory + "/cgroup.freeze") {
                // Kept in the list: the next start (or --thaw-all) tries again.
                logger.error("lifecycle: cannot thaw \(group): \(error)")
                return
            }
            unlist(group)
        }
    }

    /// Thaws everything listed by writing each cgroup's own `cgroup.freeze` (no D-Bus: used when
    /// stopping, where nothing may wait).
    func thawAllNow() {
        for group in listed.sorted() {
            if let directory = CgroupMount.directory(ofGroup: group, in: mounts),
                let error = SmallFile.write("0", toExisting: directory + "/cgroup.freeze"), !error.isMissing
            {
                logger.error("lifecycle: cannot thaw \(group): \(error)")
                continue
            }
            listed.remove(group)
            onThawedNow(group)
        }
        if let error = stateFile.write(listed.sorted()) { logger.error("lifecycle: \(error)") }
        for file in watched.keys { inotify?.remove(file) }
        watched.removeAll()
    }

    /// Stops watching.
    func stop() {
        inotify?.stop()
        inotify = nil
    }

    private func unlist(_ group: String) {
        guard listed.remove(group) != nil else { return }
        if let error = stateFile.write(listed.sorted()) { logger.error("lifecycle: \(error)") }
    }

    private func read(_ events: String) -> Bool? {
        SmallFile.text(of: events, limit: 4096).flatMap(ControlGroup.frozen(inEventsFile:))
    }

    private func inotifyEvent(_ event: InotifyWatches.Event) {
        switch event {
        case .changed(let file):
            guard let group = watched[file], let frozen = read(file) else { return }
            onFrozen(group, frozen)
        case .ended(let file):
            // The cgroup was removed: its processes are gone, nothing is left frozen.
            guard let group = watched.removeValue(forKey: file) else { return }
            unlist(group)
            onFrozen(group, false)
        case .overflow:
            for (file, group) in watched { if let frozen = read(file) { onFrozen(group, frozen) } }
        }
    }
}
