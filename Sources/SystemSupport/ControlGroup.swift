/// What the kernel says of a process's cgroup v2 group: which group (`/proc/PID/cgroup`) and
/// whether it is frozen (`cgroup.events`).
package enum ControlGroup {
    /// The cgroup v2 group of process `pid`: the path of the `0::` line of `/proc/PID/cgroup`;
    /// `nil` when the file cannot be read (the process is gone, or /proc hides it) or has no such
    /// line (no cgroup2 hierarchy), or when the group was removed.
    package static func group(ofProcess pid: Int32) -> String? {
        guard case .success(let bytes) = SmallFile.contents(of: "/proc/\(pid)/cgroup") else { return nil }
        return group(inCgroupFile: String(decoding: bytes, as: UTF8.self))
    }

    /// The path of the `0::` line of `text` (the contents of a `/proc/PID/cgroup`), e.g.
    /// `/user.slice/app.scope` for `0::/user.slice/app.scope`; `nil` when there is no such line,
    /// its path is not absolute, or the kernel marks the group removed (` (deleted)`).
    package static func group(inCgroupFile text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let path = line.dropFirst(3)
            guard path.hasPrefix("/"), !path.hasSuffix(" (deleted)") else { return nil }
            return String(path)
        }
        return nil
    }

    /// The `frozen` field of `text` (the contents of a group's `cgroup.events`): `true` for
    /// `frozen 1`, `false` for `frozen 0`; `nil` when there is no such line (a kernel without the
    /// freezer, before 5.2) or its value is neither.
    package static func frozen(inEventsFile text: String) -> Bool? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, fields[0] == "frozen" else { continue }
            switch fields[1] {
            case "1": return true
            case "0": return false
            default: return nil
            }
        }
        return nil
    }
}
