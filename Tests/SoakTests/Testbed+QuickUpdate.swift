import TestSupport

#if canImport(Glibc)
import Glibc
#endif

extension Testbed {
    /// Changes attributes and their mirrored `POWER_SUPPLY_*` properties of device `name` and
    /// sends a `change` uevent, as `update` does, but writes the test bed's files itself.
    ///
    /// umockdev's `set_attribute` and `set_property` write with `g_file_set_contents`, which
    /// calls `fsync`: 5–10 ms a change on a disk, too slow for a flood. This writes the same
    /// files (`sys/devices/<name>/<attribute>`, and the device's `uevent` file, the properties the
    /// next uevent carries) to a temporary file and renames it over the old one, so that a reader
    /// sees the old or the new file whole, and asks umockdev only for the uevent.
    func quickUpdate(_ name: String, _ values: [String: String]) throws {
        let device = "\(root)/sys/devices/\(name)"
        for (attribute, value) in values {
            try replaceFile("\(device)/\(attribute)", value)
        }
        guard let uevent = readFile("\(device)/uevent") else { throw HarnessError("\(device)/uevent is missing") }
        var lines = uevent.split(separator: "\n").map(String.init)
        for (attribute, value) in values.sorted(by: { $0.key < $1.key }) {
            let property = "POWER_SUPPLY_" + attribute.uppercased()
            if let index = lines.firstIndex(where: { $0.hasPrefix(property + "=") }) {
                lines[index] = property + "=" + value
            } else {
                lines.append(property + "=" + value)
            }
        }
        try replaceFile("\(device)/uevent", lines.joined(separator: "\n") + "\n")
        try self.uevent(name)
    }

    private func replaceFile(_ path: String, _ text: String) throws {
        // Beside the test bed's sys directory, not in the device's (a reader may list that).
        let temporary = root + "/quick-update.new"
        try writeFile(temporary, text)
        guard rename(temporary, path) == 0 else { throw HarnessError("rename \(temporary): errno \(errno)") }
    }
}
