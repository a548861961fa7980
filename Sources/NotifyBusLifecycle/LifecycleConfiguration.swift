import SystemSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `notifybusd --freeze-background` runs with (specification: Freezing background apps).
package struct LifecycleConfiguration: Sendable, Hashable {
    /// Where the windows come from.
    package enum Toplevels: String, Sendable, Hashable, CaseIterable {
        /// sway's IPC when `SWAYSOCK` is set and answers, else the first of KDE's protocol and the
        /// wlr protocol that `WAYLAND_DISPLAY` offers.
        case auto
        /// sway's IPC (`SWAYSOCK`): app id, PID and focus of each window.
        case sway
        /// `zwlr_foreign_toplevel_manager_v1` (version 3) on `WAYLAND_DISPLAY`: app id and state.
        case wlr
        /// `org_kde_plasma_window_management` (version 4) on `WAYLAND_DISPLAY` (KWin: Plasma and
        /// Plasma Mobile): app id, PID and the `active` state.
        case kde
    }

    /// Where app units come from.
    package enum AppUnits: String, Sendable, Hashable, CaseIterable {
        /// A process found outside any app unit is moved into a scope of its own.
        case make
        /// Only the app units the session made.
        case existing
    }

    /// A malformed option or configuration file: notifybusd exits 64 with it.
    package struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, naming the option or the file and line.
        package var description: String
    }

    /// The shortest delay, in seconds.
    package static let shortestDelay = 2
    /// The longest delay, in seconds.
    package static let longestDelay = 3_600

    /// The shortest and longest wake grace and task limit, in seconds.
    package static let shortestGrace = 1
    package static let longestGrace = 600

    /// Seconds in the background before an app is frozen.
    package var delay: Int = 10
    /// Seconds a woken app runs in the background before it is frozen again.
    package var wakeGrace: Int = 10
    /// Seconds a background task keeps its app running in the background.
    package var taskLimit: Int = 30
    /// Where app units come from.
    package var appUnits: AppUnits = .make
    /// App ids never frozen.
    package var exempt: Set<String> = []
    /// Where the windows come from.
    package var toplevels: Toplevels = .auto
    /// The cgroup under which app units are looked for and frozen, in the `0::` form; `nil`:
    /// `<A>/app.slice`, `<A>` the nearest ancestor of the daemon's cgroup named `user@UID.service`.
    package var cgroupRoot: String?
    /// The list of what is frozen; `nil`: `$XDG_RUNTIME_DIR/notifybus/frozen`.
    package var stateFile: String?
    /// sway's IPC socket; `nil`: `$SWAYSOCK`.
    package var swaySocket: String?
    /// The Wayland display; `nil`: `$WAYLAND_DISPLAY`, else `wayland-0`.
    package var waylandDisplay: String?

    /// The defaults.
    package init() {}

    /// `delay` as a duration.
    package var delayDuration: Duration { .seconds(delay) }

    /// Applies the configuration file's text (`key = value` lines; blank lines and lines starting
    /// with `#` ignored): `delay` (whole seconds), `exempt` (app ids separated by spaces; the key
    /// may appear on several lines), `toplevels`, `cgroup-root`, `wake-grace` and `task-limit`
    /// (whole seconds), `app-units` (`make` or `existing`).
    /// - Parameter file: the file's name, for the messages.
    /// - Throws: `Problem` naming the file and line of an unknown key or a bad value.
    package mutating func apply(configuration text: String, file: String) throws(Problem) {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingSpaces
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "\(file):\(index + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw Problem(description: "\(place): not a `key = value` line: \(line)")
            }
            let key = line[..<equals].trimmingSpaces
            let value = line[line.index(after: equals)...].trimmingSpaces
            switch key {
            case "delay":
                delay = try Self.delay(value, where: "\(place): delay")
            case "exempt":
                exempt.formUnion(value.split(separator: " ", omittingEmptySubsequences: true).map(String.init))
            case "wake-grace":
                wakeGrace = try Self.grace(value, where: "\(place): wake-grace")
            case "task-limit":
                taskLimit = try Self.grace(value, where: "\(place): task-limit")
            case "app-units":
                guard let units = AppUnits(rawValue: value) else {
                    throw Problem(description: "\(place): app-units must be make or existing, not \"\(value)\"")
                }
                appUnits = units
            case "toplevels":
                toplevels = try Self.toplevels(value, where: "\(place): toplevels")
            case "cgroup-root":
                guard value.hasPrefix("/"), !value.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else {
                    throw Problem(description: "\(place): cgroup-root must be an absolute cgroup path such as /user.slice/user-1000.slice/user@1000.service/app.slice, not \"\(value)\"")
                }
                cgroupRoot = value
            default:
                throw Problem(description: "\(place): unknown key \"\(key)\" (the keys are delay, exempt, toplevels, cgroup-root, wake-grace, task-limit, app-units)")
            }
        }
    }

    /// Reads and applies the configuration file at `path`.
    /// - Throws: `Problem` when it is missing or unreadable, or malformed.
    package mutating func apply(configurationFile path: String) throws(Problem) {
        switch SmallFile.contents(of: path, limit: 1 << 20) {
        case .success(let bytes): try apply(configuration: String(decoding: bytes, as: UTF8.self), file: path)
        case .failure(let error): throw Problem(description: "--freeze-config \(path): \(error)")
        }
    }

    /// A delay in whole seconds within range.
    package static func delay(_ text: String, where place: String) throws(Problem) -> Int {
        guard let seconds = Int(text), (shortestDelay...longestDelay).contains(seconds) else {
            throw Problem(description: "\(place) must be whole seconds from \(shortestDelay) to \(longestDelay), not \"\(text)\"")
        }
        return seconds
    }

    /// A wake grace or task limit in whole seconds within range.
    package static func grace(_ text: String, where place: String) throws(Problem) -> Int {
        guard let seconds = Int(text), (shortestGrace...longestGrace).contains(seconds) else {
            throw Problem(description: "\(place) must be whole seconds from \(shortestGrace) to \(longestGrace), not \"\(text)\"")
        }
        return seconds
    }

    /// A backend by name.
    package static func toplevels(_ text: String, where place: String) throws(Problem) -> Toplevels {
        guard let value = Toplevels(rawValue: text) else {
            throw Problem(description: "\(place) must be auto, sway, wlr or kde, not \"\(text)\"")
        }
        return value
    }

    /// The default cgroup root for a daemon in `group` run by `uid`: `<A>/app.slice`, `<A>` the
    /// nearest ancestor of `group` (itself included) named `user@UID.service`; `nil` when there is none.
    package static func defaultCgroupRoot(ofGroup group: String, uid: UInt32) -> String? {
        let components = group.split(separator: "/")
        guard let index = components.lastIndex(where: { $0 == "user@\(uid).service" }) else { return nil }
        return "/" + components[...index].joined(separator: "/") + "/app.slice"
    }

    /// The cgroup root: the configured one, else the default for this process.
    package func resolvedCgroupRoot() -> String? {
        if let cgroupRoot { return cgroupRoot }
        guard let group = ControlGroup.group(ofProcess: getpid()) else { return nil }
        return Self.defaultCgroupRoot(ofGroup: group, uid: getuid())
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}
