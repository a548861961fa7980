import EpollLoop
import Logging
import SystemSupport

/// The files of freezing, on the loop thread: the state file that lists what the lifecycle
/// froze, each listed cgroup's `cgroup.events` watched with inotify, and its own `cgroup.freeze`
/// read and written. What to do with them is `FreezeMechanism`'s; this type only does it.
final class CgroupFreezer {
    /// What a watched cgroup's `cgroup.events` did.
    enum Change: Sendable, Hashable {
        /// It changed: `frozen` and the cgroup's own `cgroup.freeze`, as read now.
        case changed(group: String, frozen: Bool, ownBitSet: Bool)
        /// It is gone (the cgroup was removed).
        case removed(group: String)
    }

    private let mounts: [CgroupMount]
    private let stateFile: FrozenStateFile
    private let logger: Logger
    private var inotify: InotifyWatches?
    /// The cgroups listed in the state file.
    private(set) var listed: Set<String> = []
    /// The watched `cgroup.events` files and their cgroups.
    private var watched: [String: String] = [:]
    /// The cgroups whose `0` could not be written: they stay listed when released.
    private var unthawed: Set<String> = []
    /// Told of each change of a watched cgroup.
    var onChange: (Change) -> Void = { _ in }

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

    /// Whether the cgroup's own `cgroup.freeze` reads 1 (someone froze it).
    func ownBitSet(_ group: String) -> Bool {
        guard let directory = CgroupMount.directory(ofGroup: group, in: mounts) else { return false }
        return SmallFile.text(of: directory + "/cgroup.freeze", limit: 16)?.hasPrefix("1") == true
    }

    /// Lists `group` in the state file and watches its `cgroup.events`; `nil`, or what failed.
    func prepare(_ group: String) -> String? {
        guard let directory = CgroupMount.directory(ofGroup: group, in: mounts) else { return "\(group) is under no cgroup2 mount" }
        listed.insert(group)
        if let error = stateFile.write(listed.sorted()) {
            listed.remove(group)
            return error
        }
        let events = directory + "/cgroup.events"
        if let error = inotify?.add(events) {
            release(group)
            return "cannot watch \(events) (errno \(error))"
        }
        watched[events] = group
        return nil
    }

    /// Stops watching `group` and unlists it, unless its thaw could not be written.
    func release(_ group: String) {
        if let events = CgroupMount.directory(ofGroup: group, in: mounts).map({ $0 + "/cgroup.events" }),
            watched.removeValue(forKey: events) != nil
        {
            inotify?.remove(events)
        }
        guard unthawed.remove(group) == nil, listed.remove(group) != nil else { return }
        if let error = stateFile.write(listed.sorted()) { logger.error("lifecycle: \(error)") }
    }

    /// Writes `1` (`freeze`) or `0` to the cgroup's own `cgroup.freeze`; `nil`, or the error. A
    /// cgroup that is gone needs no thaw.
    func write(_ freeze: Bool, to group: String) -> String? {
        guard let directory = CgroupMount.directory(ofGroup: group, in: mounts) else { return "\(group) is under no cgroup2 mount" }
        guard let error = SmallFile.write(freeze ? "1" : "0", toExisting: directory + "/cgroup.freeze") else {
            if !freeze { unthawed.remove(group) }
            return nil
        }
        if !freeze {
            guard !error.isMissing else { return nil }
            unthawed.insert(group)
        }
        return "\(error)"
    }

    /// What the cgroup's `cgroup.events` and `cgroup.freeze` say now; `nil` when it is gone.
    func read(_ group: String) -> Change? {
        guard let directory = CgroupMount.directory(ofGroup: group, in: mounts),
            let frozen = SmallFile.text(of: directory + "/cgroup.events", limit: 4096).flatMap(ControlGroup.frozen(inEventsFile:))
        else { return nil }
        return .changed(group: group, frozen: frozen, ownBitSet: ownBitSet(group))
    }

    /// Stops watching.
    func stop() {
        inotify?.stop()
        inotify = nil
        watched.removeAll()
    }

    private func inotifyEvent(_ event: InotifyWatches.Event) {
        switch event {
        case .changed(let file):
            guard let group = watched[file], let change = read(group) else { return }
            onChange(change)
        case .ended(let file):
            // The cgroup was removed: its processes are gone, nothing is left frozen.
            guard let group = watched.removeValue(forKey: file) else { return }
            onChange(.removed(group: group))
        case .overflow:
            for group in watched.values.sorted() { if let change = read(group) { onChange(change) } }
        }
    }
}
