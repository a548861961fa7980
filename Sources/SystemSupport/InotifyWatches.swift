package import EpollLoop

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One inotify instance on the loop thread: the one owner of inotify. Wraps `inotify_init1`,
/// `inotify_add_watch`, `inotify_rm_watch` and `read`.
///
/// It watches files for modification (`modified`: the daemon's `cgroup.events` files) and
/// directories for what happens to their entries (`entries`: `FileChangeWatcher`'s
/// configuration files, replaced by an atomic rename). `handler` is told, on the loop thread, of
/// each path that changed (a watched file, or an entry of a watched directory; once per read of
/// the queue, however many events it had), of a path whose watch the kernel ended (the file or
/// directory was removed: `IN_IGNORED`), and of a queue overflow, after which any file may have
/// changed.
package final class InotifyWatches {
    /// What to watch a path for.
    package struct Changes: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }

        /// The file was written (`IN_MODIFY`).
        package static let modified = Changes(rawValue: UInt32(IN_MODIFY))
        /// An entry of the directory was created, written and closed, renamed in or out, deleted,
        /// or had its attributes changed.
        package static let entries = Changes(
            rawValue: UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB))
    }

    /// What the kernel told.
    package enum Event: Hashable, Sendable {
        /// The file at the path changed: a watched file, or an entry of a watched directory.
        case changed(String)
        /// The watch of the path ended without `remove(_:)`: the file or directory is gone.
        case ended(String)
        /// Events were lost (`IN_Q_OVERFLOW`): any watched file may have changed.
        case overflow
    }

    private unowned let context: LoopContext
    private let handler: (Event) -> Void
    private var fd: Int32
    private var registration: IORegistration?
    private var paths: [Int32: String] = [:]
    private var descriptors: [String: Int32] = [:]

    /// Starts an inotify instance and watches its descriptor on `context`'s loop.
    /// - Throws: `EventLoopError.systemCall` when `inotify_init1` fails, or the loop's error
    ///   when it cannot watch the descriptor.
    package init(context: LoopContext, handler: @escaping (Event) -> Void) throws(EventLoopError) {
        self.context = context
        self.handler = handler
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw .systemCall(operation: "inotify_init1", errno: errno) }
        do {
            registration = try context.register(fileDescriptor: fd, interest: .readable) { [weak self] _ in
                self?.drain()
            }
        } catch {
            close(fd)
            fd = -1
            throw error
        }
    }

    deinit { stop() }

    /// The paths watched now.
    package var watchedPaths: [String] { Array(descriptors.keys) }

    /// Watches the file or directory at `path` for `changes`.
    /// - Returns: `nil` when it is watched, or the `errno` of `inotify_add_watch` (`ENOENT` when
    ///   it does not exist).
    package func add(_ path: String, for changes: Changes = .modified) -> Int32? {
        guard fd >= 0 else { return EBADF }
        if descriptors[path] != nil { return nil }
        let wd = inotify_add_watch(fd, path, changes.rawValue)
        guard wd >= 0 else { return errno }
        paths[wd] = path
        descriptors[path] = wd
        return nil
    }

    /// Stops watching `path`; a path not watched is ignored.
    package func remove(_ path: String) {
        guard let wd = descriptors.removeValue(forKey: path) else { return }
        paths[wd] = nil
        if fd >= 0 { _ = inotify_rm_watch(fd, wd) }
    }

    /// Ends every watch and the instance.
    package func stop() {
        if let registration { context.deregister(registration) }
        registration = nil
        if fd >= 0 { _ = close(fd) }
        fd = -1
        paths = [:]
        descriptors = [:]
    }

    /// Reads every queued event, then tells the handler what changed (each path once).
    private func drain() {
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let headerSize = MemoryLayout<inotify_event>.size
        while fd >= 0 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + headerSize <= count {
                    let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let name = raw[(offset + headerSize)..<min(count, offset + headerSize + length)].prefix { $0 != 0 }
                    offset += headerSize + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        events.append(.overflow)
                    } else if mask & UInt32(IN_IGNORED) != 0 {
                        // Also sent after `remove`, whose path is already forgotten.
                        if let path = paths.removeValue(forKey: wd) {
                            descriptors[path] = nil
                            events.append(.ended(path))
                        }
                    } else if let path = paths[wd] {
                        events.append(.changed(name.isEmpty ? path : Self.join(path, String(decoding: name, as: UTF8.self))))
                    }
                }
            }
        }
        var told: Set<Event> = []
        for event in events where told.insert(event).inserted { handler(event) }
    }

    /// The path of the entry `name` of `directory`.
    private static func join(_ directory: String, _ name: String) -> String {
        directory == "/" ? "/" + name : directory + "/" + name
    }
}
