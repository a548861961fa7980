/// A mount of the cgroup v2 file system, as `/proc/self/mountinfo` lists it: where a process's
/// group (the `0::/path` line of `/proc/PID/cgroup`) is found as a directory.
///
/// Most systems mount the whole hierarchy at `/sys/fs/cgroup`; hybrid ones at
/// `/sys/fs/cgroup/unified`. A mount may also show only part of the hierarchy (its `root` is
/// then not `/`), and a process may see several (a second view mounted outside `/sys`, which is
/// the one to use where an `LD_PRELOAD` such as umockdev's redirects every `/sys` path).
package struct CgroupMount: Sendable, Hashable, CustomStringConvertible {
    /// The group of the hierarchy that the mount shows at its mount point (`/` for the whole).
    package var root: String
    /// Where it is mounted.
    package var mountPoint: String

    /// A mount showing the group `root` at `mountPoint`.
    package init(root: String, mountPoint: String) {
        self.root = root
        self.mountPoint = mountPoint
    }

    /// `mountPoint`, with the root when it is not `/`.
    package var description: String { root == "/" ? mountPoint : "\(mountPoint) (root \(root))" }

    /// The directory of `group` (a path as in `/proc/PID/cgroup`: `/`, `/user.slice/app.scope`)
    /// under this mount; `nil` when the group lies outside the mount's root, or is not an
    /// absolute path without `.` or `..` components.
    package func directory(ofGroup group: String) -> String? {
        guard group.hasPrefix("/") else { return nil }
        let components = group.split(separator: "/", omittingEmptySubsequences: true)
        guard !components.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        let rootComponents = root.split(separator: "/", omittingEmptySubsequences: true)
        guard components.starts(with: rootComponents) else { return nil }
        let below = components.dropFirst(rootComponents.count)
        let base = mountPoint.hasSuffix("/") ? String(mountPoint.dropLast()) : mountPoint
        return below.isEmpty ? (base.isEmpty ? "/" : base) : base + "/" + below.joined(separator: "/")
    }

    // MARK: Finding the mounts

    /// The cgroup2 mounts that `mountInfo` (the text of `/proc/self/mountinfo`) lists, in its order.
    ///
    /// Each line reads `ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE
    /// SUPEROPTIONS`; the paths escape space, tab, newline and backslash in octal (`\040`).
    /// Lines that do not follow this form are skipped.
    package static func mounts(inMountInfo mountInfo: String) -> [CgroupMount] {
        var mounts: [CgroupMount] = []
        for line in mountInfo.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 7,
                let separator = fields[6...].firstIndex(of: "-"),
                separator + 1 < fields.count,
                fields[separator + 1] == "cgroup2"
            else { continue }
            mounts.append(CgroupMount(root: unescaped(fields[3]), mountPoint: unescaped(fields[4])))
        }
        return mounts
    }

    /// The cgroup2 mounts of this process that can be used (their `cgroup.procs` is readable),
    /// those showing the whole hierarchy first; empty when there is none, or when
    /// `/proc/self/mountinfo` cannot be read.
    package static func usableMounts(mountInfoPath: String = "/proc/self/mountinfo") -> [CgroupMount] {
        guard case .success(let bytes) = SmallFile.contents(of: mountInfoPath, limit: 4 << 20) else { return [] }
        let usable = mounts(inMountInfo: String(decoding: bytes, as: UTF8.self)).filter { mount in
            guard let procs = mount.directory(ofGroup: mount.root).map({ $0 == "/" ? "/cgroup.procs" : $0 + "/cgroup.procs" })
            else { return false }
            return SmallFile.isReadable(procs)
        }
        var seen: Set<CgroupMount> = []
        let unique = usable.filter { seen.insert($0).inserted }
        return unique.filter { $0.root == "/" } + unique.filter { $0.root != "/" }
    }

    /// The directory of `group` under the first of `mounts` that shows it.
    package static func directory(ofGroup group: String, in mounts: [CgroupMount]) -> String? {
        for mount in mounts {
            if let directory = mount.directory(ofGroup: group) { return directory }
        }
        return nil
    }

    /// `field` with the octal escapes of mountinfo (`\040` for a space, `\011`, `\012`, `\134`)
    /// replaced by their bytes; a backslash not followed by three octal digits stays as it is.
    static func unescaped(_ field: Substring) -> String {
        ByteEscapes.decode(field, marker: "\\", digits: 3, radix: 8)
    }
}
