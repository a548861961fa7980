package import SystemSupport

/// systemd's units for applications (`app-*.scope`, `app-*.service`), which the lifecycle
/// freezes: an app's cgroups (specification: Freezing background apps).
///
/// The names: `app-<app-id>-<random>.scope`, `app-<launcher>-<app-id>-<random>.scope` and
/// `app-<launcher>-<app-id>@<random>.service`, where a `-` inside a part is written `\x2d` (and
/// other bytes `\xNN`). The match is on the whole app-id part, escapes undone.
package enum AppUnit {
    /// Whether `name` (a cgroup's last path component) is an app unit's: `app-*.scope` or
    /// `app-*.service`.
    package static func isAppUnit(_ name: Substring) -> Bool {
        name.count > 4 && name.hasPrefix("app-") && (name.hasSuffix(".scope") || name.hasSuffix(".service"))
    }

    /// The app id that the unit `name` carries in one of systemd's forms; `nil` when it follows none.
    package static func appID(ofUnit name: Substring) -> String? {
        guard isAppUnit(name) else { return nil }
        let body = name.dropFirst(4)
        if body.hasSuffix(".scope") {
            let parts = body.dropLast(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3 else { return nil }
            return unescaped(parts[parts.count - 2])
        }
        let unit = body.dropLast(8)
        guard let at = unit.firstIndex(of: "@") else { return nil }
        let parts = unit[..<at].split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        return unescaped(parts[1])
    }

    /// The app's cgroups without a PID to go by: the app units directly under `root` (a cgroup in
    /// the `0::` form) whose name carries `appID`, each as a cgroup in the `0::` form.
    package static func groups(of appID: String, under root: String, mounts: [CgroupMount]) -> [String] {
        guard let directory = CgroupMount.directory(ofGroup: root, in: mounts) else { return [] }
        let base = root.hasSuffix("/") ? String(root.dropLast()) : root
        return DirectoryListing.subdirectories(of: directory)
            .filter { Self.appID(ofUnit: $0[...]) == appID }
            .sorted()
            .map { base + "/" + $0 }
    }

    /// The app unit of a window's process: its `0::` cgroup when that is an app unit below
    /// `root`; `nil` otherwise (the process is in no app unit, or in a sub-cgroup of one).
    package static func group(ofProcess pid: Int32, under root: String) -> String? {
        guard let group = ControlGroup.group(ofProcess: pid) else { return nil }
        return isUnit(group, under: root) ? group : nil
    }

    /// Whether `group` is an app unit strictly below `root`.
    package static func isUnit(_ group: String, under root: String) -> Bool {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard group.hasPrefix(prefix), let last = group.split(separator: "/").last else { return false }
        return isAppUnit(last)
    }

    /// `text` escaped as systemd escapes a part of a unit name (`unit_name_escape`): ASCII
    /// letters, digits, `:`, `_` and `.` (but a leading `.`) as they are, every other byte `\xNN`.
    package static func escaped(_ text: String) -> String {
        var result = ""
        for (index, byte) in text.utf8.enumerated() {
            let plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "_") || (byte == UInt8(ascii: ".") && index > 0)
            if plain {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = Array("0123456789abcdef".utf8)
                result += "\\x"
                result.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 15)]))
            }
        }
        return result
    }

    /// The name of the scope notifybusd makes for the process `pid` of `appID`:
    /// `app-notifybus-<app-id>-<pid>.scope`, the app id escaped as systemd escapes a unit name.
    package static func madeScopeName(appID: String, pid: Int32) -> String {
        "app-notifybus-\(escaped(appID))-\(pid).scope"
    }

    /// `part` with systemd's `\xNN` escapes undone.
    static func unescaped(_ part: Substring) -> String {
        ByteEscapes.decode(part, marker: "\\x", digits: 2, radix: 16)
    }
}
