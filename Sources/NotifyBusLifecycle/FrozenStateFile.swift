#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
package import SystemSupport

/// The list of cgroups the lifecycle froze, kept so that nothing stays frozen after notifybusd
/// is gone (specification: Freezing background apps): `$XDG_RUNTIME_DIR/notifybus/frozen`, one
/// cgroup a line in the `0::` form, nothing else; its directory made 0700 and the file 0600.
///
/// A cgroup is listed before it is frozen and taken out after its thaw; at start, and with
/// `notifybusd --thaw-all`, each listed cgroup that still exists is thawed.
package struct FrozenStateFile: Sendable, Hashable {
    /// Where the list is.
    package let path: String

    /// The list at `path`.
    package init(path: String) {
        self.path = path
    }

    /// The list's default place, `$XDG_RUNTIME_DIR/notifybus/frozen`; `nil` without an absolute
    /// `XDG_RUNTIME_DIR`.
    package static var defaultPath: String? {
        guard let value = getenv("XDG_RUNTIME_DIR") else { return nil }
        let runtime = String(cString: value)
        guard runtime.hasPrefix("/") else { return nil }
        return (runtime.hasSuffix("/") ? runtime : runtime + "/") + "notifybus/frozen"
    }

    /// The cgroups listed now; none when the file is missing or unreadable.
    package func groups() -> [String] {
        guard let text = SmallFile.text(of: path) else { return [] }
        return text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("/") }
    }

    /// Makes the directory (0700) if it is missing and writes `groups`, one a line.
    /// - Returns: `nil` on success, else what failed, in words.
    package func write(_ groups: some Sequence<String>) -> String? {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            if mkdir(directory, 0o700) != 0, errno != EEXIST {
                return "cannot make \(directory): \(ErrnoText.of(errno))"
            }
        }
        let text = groups.map { $0 + "\n" }.joined()
        if let error = SmallFile.replace(path, with: text, mode: 0o600) { return "cannot write \(path): \(error)" }
        return nil
    }

    /// Thaws every listed cgroup that still exists (its own `cgroup.freeze` set to 0) and lists
    /// only those that could not be thawed.
    /// - Returns: each cgroup that could not be thawed, with why; a file that cannot be written
    ///   again counts as a failure too.
    package func thawAll(mounts: [CgroupMount] = CgroupMount.usableMounts()) -> [(group: String, reason: String)] {
        let listed = groups()
        guard !listed.isEmpty else { return [] }
        var failures: [(group: String, reason: String)] = []
        for group in listed {
            guard let directory = CgroupMount.directory(ofGroup: group, in: mounts) else {
                if mounts.isEmpty { failures.append((group, "no cgroup2 mount")) }
                continue
            }
            if let error = SmallFile.write("0", toExisting: directory + "/cgroup.freeze"), !error.isMissing {
                failures.append((group, "\(error)"))
            }
        }
        if let error = write(failures.map(\.group)) { failures.append((path, error)) }
        return failures
    }
}
