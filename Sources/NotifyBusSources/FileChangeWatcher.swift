import EpollLoop

#if canImport(Glibc)
import Glibc
#endif

/// Watches files for edits with inotify on their directories (editors and tools replace files
/// by an atomic rename, which a watch on the file itself would miss), on the loop thread.
///
/// `handler` runs once per burst of changes (after `quietPeriod` without more), for creation,
/// writes, renames into place and removal of any of the files. Directories that do not exist
/// are skipped. Wraps `inotify_init1` and `inotify_add_watch`.
final class FileChangeWatcher {
    private unowned let context: LoopContext
    private let names: Set<String>
    private let quietPeriod: Duration
    private let handler: () -> Void
    private var fd: Int32 = -1
    private var registration: IORegistration?
    private var timer: LoopTimer?
    /// Why watching failed, if it did.
    private(set) var problem: String?

    init(paths: [String], context: LoopContext, quietPeriod: Duration = .milliseconds(20), handler: @escaping () -> Void) {
        self.context = context
        self.quietPeriod = quietPeriod
        self.handler = handler
        names = Set(paths)
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            problem = "inotify_init1: \(String(cString: strerror(errno)))"
            return
        }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        var directories: Set<String> = []
        for path in paths {
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            directories.insert(directory.isEmpty ? "/" : directory)
        }
        var watched: [Int32: String] = [:]
        for directory in directories.sorted() {
            let wd = inotify_add_watch(fd, directory, mask)
            if wd >= 0 { watched[wd] = directory }
        }
        self.directories = watched
        do {
            registration = try context.register(fileDescriptor: fd, interest: .readable) { [weak self] _ in
                self?.drain()
            }
        } catch {
            problem = "cannot watch inotify: \(error)"
        }
    }

    private var directories: [Int32: String] = [:]

    deinit { stop() }

    func stop() {
        if let registration { context.deregister(registration) }
        registration = nil
        if let timer { context.cancelTimer(timer) }
        timer = nil
        if fd >= 0 { close(fd) }
        fd = -1
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        var relevant = false
        while fd >= 0 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            buffer.withUnsafeBytes { raw in
                while offset + headerSize <= count {
                    let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = raw[(offset + headerSize)..<min(count, offset + headerSize + length)]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    if let directory = directories[wd] {
                        let path = directory == "/" ? "/" + name : directory + "/" + name
                        if names.contains(path) { relevant = true }
                    }
                    offset += headerSize + length
                }
            }
        }
        guard relevant else { return }
        if let timer { context.cancelTimer(timer) }
        timer = context.scheduleTimer(after: quietPeriod) { [weak self] in
            self?.timer = nil
            self?.handler()
        }
    }
}
