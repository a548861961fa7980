import CUmockdev

#if canImport(Glibc)
import Glibc
#endif

/// A umockdev test bed (`UMockdevTestbed`) created in this process: a fake /sys under a temporary
/// directory that libudev sees through the preload, and the sender of its uevents.
///
/// `umockdev_testbed_new` sets `UMOCKDEV_DIR` for this process; the preload
/// (`libumockdev-preload.so.0`, which must be loaded) then redirects /sys and emulates the netlink
/// uevent sockets as `$UMOCKDEV_DIR/event<fd>`. `umockdev_testbed_uevent` builds a libudev
/// message for the device and sends it to every such socket, one after the other, in the order
/// `glob(…, GLOB_NOSORT)` lists them (see `socketOrder`).
///
/// Used on one thread only (not `Sendable`). Releasing it removes the directory (umockdev's
/// finalizer does; nothing else may remove it first, Tests/README.md, "umockdev test beds").
final class Testbed {
    private let pointer: UnsafeMutablePointer<UMockdevTestbed>
    /// The test bed's root directory (`UMOCKDEV_DIR`).
    let root: String

    init() {
        pointer = umockdev_testbed_new()
        let dir = umockdev_testbed_get_root_dir(pointer)!
        root = String(cString: dir)
        g_free(dir)
    }

    deinit { g_object_unref(pointer) }

    /// Adds `/sys/class/<subsystem>/<name>` with sysfs `attributes` and udev `properties`
    /// (umockdev sends an `add` uevent). Returns its sysfs path. Wraps `umockdev_testbed_add_devicev`.
    func addDevice(subsystem: String, name: String, attributes: [(String, String)], properties: [(String, String)]) -> String {
        withNullTerminated(attributes.flatMap { [$0.0, $0.1] }) { attributes in
            withNullTerminated(properties.flatMap { [$0.0, $0.1] }) { properties in
                let path = umockdev_testbed_add_devicev(pointer, subsystem, name, nil, attributes, properties)!
                defer { g_free(path) }
                return String(cString: path)
            }
        }
    }

    /// Writes the sysfs attribute (what a re-read sees). Wraps `umockdev_testbed_set_attribute`.
    func setAttribute(_ syspath: String, _ name: String, _ value: String) {
        umockdev_testbed_set_attribute(pointer, syspath, name, value)
    }

    /// Sets the udev property (the device's uevent file). Wraps `umockdev_testbed_set_property`.
    func setProperty(_ syspath: String, _ name: String, _ value: String) {
        umockdev_testbed_set_property(pointer, syspath, name, value)
    }

    /// Sends a uevent for the device to every emulated uevent socket. Wraps `umockdev_testbed_uevent`.
    func uevent(_ syspath: String, action: String) {
        umockdev_testbed_uevent(pointer, syspath, action)
    }

    /// The emulated uevent sockets in the order the uevent sender serves them: the sender lists
    /// them with `glob("$UMOCKDEV_DIR/event[0-9]*", GLOB_NOSORT)`, and so does this. Each entry is
    /// the file descriptor number in the socket's name.
    var socketOrder: [Int32] {
        var result = glob_t()
        defer { globfree(&result) }
        guard glob(root + "/event[0-9]*", GLOB_NOSORT, nil, &result) == 0 else { return [] }
        return (0..<Int(result.gl_pathc)).compactMap { index in
            guard let path = result.gl_pathv[index] else { return nil }
            let name = String(cString: path)
            return Int32(name[name.index(name.lastIndex(of: "t")!, offsetBy: 1)...])
        }
    }

    private func withNullTerminated<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<gchar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}
