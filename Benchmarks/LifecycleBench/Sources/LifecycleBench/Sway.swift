import BenchDBus
import ChildProcess
import NotifyBus

#if canImport(Glibc)
import Glibc
#endif

/// One connection to sway's IPC socket: `i3-ipc`, little-endian u32 length and type, payload.
final class SwayIPC {
    static let runCommand: UInt32 = 0
    static let getTree: UInt32 = 4

    let descriptor: Int32

    init(socket path: String) throws(BenchError) {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard descriptor >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw BenchError("cannot make a socket for \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw BenchError("cannot connect to sway at \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    func send(_ type: UInt32, _ payload: String) throws(BenchError) {
        let body = Array(payload.utf8)
        var message = Array("i3-ipc".utf8)
        withUnsafeBytes(of: UInt32(body.count).littleEndian) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: type.littleEndian) { message.append(contentsOf: $0) }
        message.append(contentsOf: body)
        guard message.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == message.count else {
            throw BenchError("cannot write to sway's IPC socket")
        }
    }

    /// The next message (a reply, or an event on a subscribed connection).
    func receive() throws(BenchError) -> (type: UInt32, payload: [UInt8]) {
        let header = try read(14)
        let length = header[6..<10].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let type = header[10..<14].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (type, try read(Int(length)))
    }

    /// Sends a message and returns the payload of its reply.
    func call(_ type: UInt32, _ payload: String) throws(BenchError) -> [UInt8] {
        try send(type, payload)
        return try receive().payload
    }

    private func read(_ count: Int) throws(BenchError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) > 0 else { throw BenchError("sway did not answer within 10 s") }
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + done, count - done) }
            guard got > 0 else { throw BenchError("sway closed its IPC socket") }
            done += got
        }
        return bytes
    }
}

/// A headless sway (wlroots' headless backend, pixman renderer, one 1024x768 output, tabbed
/// workspaces: one window shown at a time, as on a phone) running as `nobody` in a runtime
/// directory of its own, and the foot windows opened on it, each in an app scope.
final class Sway {
    static let user = (uid: uid_t(65534), gid: gid_t(65534))

    /// One foot window: its process (foot's PID is the view's `pid`) and sway's container id.
    struct Window {
        let appID: String
        let process: ChildProcess
        let containerID: Int64
        let scope: Scope
    }

    let directory: String
    let socket: String
    private let process: ChildProcess
    let ipc: SwayIPC
    private(set) var windows: [Window] = []

    /// Starts sway in `directory` (made here, given to `nobody`, mode 0700) and connects to it.
    init(directory: String) throws(BenchError) {
        guard mkdir(directory, 0o700) == 0, chown(directory, Self.user.uid, Self.user.gid) == 0 else {
            throw BenchError("cannot make \(directory) for nobody: \(String(cString: strerror(errno)))")
        }
        self.directory = directory
        let config = directory + "/sway.conf"
        guard let file = fopen(config, "w") else { throw BenchError("cannot write \(config)") }
        fputs("output HEADLESS-1 resolution 1024x768\nxwayland disable\nworkspace_layout tabbed\n", file)
        fclose(file)
        process = try ChildProcess.start(
            ["/usr/bin/setpriv", "--reuid=\(Self.user.uid)", "--regid=\(Self.user.gid)", "--clear-groups", "/usr/bin/sway", "-c", config],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_RUNTIME_DIR": directory, "WLR_BACKENDS": "headless",
                "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_HEADLESS_OUTPUTS": "1",
                "WAYLAND_DISPLAY": "", "DISPLAY": "",
            ],
            standardError: directory + "/sway.log")
        socket = "\(directory)/sway-ipc.\(Self.user.uid).\(process.pid).sock"
        var connected: SwayIPC?
        for _ in 0..<400 where connected == nil {
            if access(socket, F_OK) == 0, access(directory + "/wayland-1", F_OK) == 0 { connected = try? SwayIPC(socket: socket) }
            if connected == nil { usleep(50_000) }
        }
        guard let connected else {
            process.terminate()
            throw BenchError("sway did not come up within 20 s: \(readText(directory + "/sway.log") ?? "")")
        }
        ipc = connected
    }

    /// Opens `foot --app-id=appID -- command…` as `nobody` inside `scope`, and waits until sway
    /// lists its window.
    @discardableResult
    func open(_ appID: String, in scope: Scope, running command: [String] = ["/bin/sleep", "3600"]) throws(BenchError) -> Window {
        let launch = ["/bin/sh", "-c", "echo $$ > '\(scope.directory)/cgroup.procs' && exec \"$@\"", "sh",
                      "/usr/bin/setpriv", "--reuid=\(Self.user.uid)", "--regid=\(Self.user.gid)", "--clear-groups",
                      "/usr/bin/foot", "--app-id=\(appID)", "--"] + command
        let child = try ChildProcess.start(
            launch,
            environment: ["PATH": "/usr/bin:/bin", "HOME": directory, "XDG_RUNTIME_DIR": directory, "WAYLAND_DISPLAY": "wayland-1"],
            standardError: directory + "/foot-\(appID).log")
        for _ in 0..<400 {
            if let view = try views().first(where: { $0.pid == child.pid }) {
                let window = Window(appID: appID, process: child, containerID: view.id, scope: scope)
                windows.append(window)
                return window
            }
            usleep(50_000)
        }
        child.terminate(signal: SIGKILL)
        throw BenchError("foot --app-id=\(appID) showed no window within 20 s: \(readText(directory + "/foot-\(appID).log") ?? "")")
    }

    /// Every view in sway's tree: container id, PID, app id, whether focused.
    func views() throws(BenchError) -> [(id: Int64, pid: Int32, appID: String, focused: Bool)] {
        let payload = try ipc.call(SwayIPC.getTree, "")
        let tree: JSONValue
        do { tree = try JSONValue(parsing: payload) } catch { throw BenchError("get_tree: \(error)") }
        var views: [(id: Int64, pid: Int32, appID: String, focused: Bool)] = []
        func walk(_ node: JSONValue) {
            if let id = node["id"]?.doubleValue, let pid = node["pid"]?.doubleValue {
                views.append((Int64(id), Int32(pid), node["app_id"]?.stringValue ?? "", node["focused"]?.boolValue ?? false))
            }
            for member in ["nodes", "floating_nodes"] {
                if case .array(let children)? = node[member] { children.forEach(walk) }
            }
        }
        walk(tree)
        return views
    }

    /// Sends `[con_id=N] focus` without waiting for the reply (read it with `ipc.receive()`).
    func sendFocus(_ window: Window) throws(BenchError) {
        try ipc.send(SwayIPC.runCommand, "[con_id=\(window.containerID)] focus")
    }

    /// Focuses `window` and waits for sway's reply.
    func focus(_ window: Window) throws(BenchError) {
        try sendFocus(window)
        let reply = String(decoding: try ipc.receive().payload, as: UTF8.self)
        guard reply.contains("\"success\": true") || reply.contains("\"success\":true") else {
            throw BenchError("sway refused to focus \(window.appID): \(reply)")
        }
    }

    /// Kills every window (their scopes thawed first), then sway, and removes its directory.
    func stop() {
        for window in windows {
            try? window.scope.setFreeze(false)
            window.process.terminate(signal: SIGKILL)
        }
        windows = []
        process.terminate()
        removeTree(directory)
    }
}

/// Removes `path` and everything under it.
func removeTree(_ path: String) {
    guard let directory = opendir(path) else {
        unlink(path)
        return
    }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != ".", name != ".." { names.append(name) }
    }
    closedir(directory)
    for name in names {
        var status = stat()
        if lstat("\(path)/\(name)", &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            removeTree("\(path)/\(name)")
        } else {
            unlink("\(path)/\(name)")
        }
    }
    rmdir(path)
}
