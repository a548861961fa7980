package import EpollLoop

/// Watches files for edits through `InotifyWatches` on their directories (editors and tools
/// replace files by an atomic rename, which a watch on the file itself would miss), on the loop
/// thread: the locale files, `/etc/localtime`.
///
/// `handler` runs once per burst of changes (after `quietPeriod` without more), for creation,
/// writes, renames into place and removal of any of the files, and after a lost queue (any of
/// them may have changed). Directories that do not exist are skipped.
package final class FileChangeWatcher {
    private unowned let context: LoopContext
    private let names: Set<String>
    private let quietPeriod: Duration
    private let handler: () -> Void
    private var watches: InotifyWatches?
    private var timer: LoopTimer?
    /// Why watching failed, if it did.
    package private(set) var problem: String?

    package init(
        paths: [String], context: LoopContext, quietPeriod: Duration = .milliseconds(20), handler: @escaping () -> Void
    ) {
        self.context = context
        self.quietPeriod = quietPeriod
        self.handler = handler
        names = Set(paths)
        do {
            watches = try InotifyWatches(context: context) { [weak self] event in self?.changed(event) }
        } catch {
            problem = "\(error)"
            return
        }
        var directories: Set<String> = []
        for path in paths {
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            directories.insert(directory.isEmpty ? "/" : directory)
        }
        for directory in directories.sorted() { _ = watches?.add(directory, for: .entries) }
    }

    deinit { stop() }

    package func stop() {
        watches?.stop()
        watches = nil
        if let timer { context.cancelTimer(timer) }
        timer = nil
    }

    /// Starts the quiet period again for a change of one of the files.
    private func changed(_ event: InotifyWatches.Event) {
        switch event {
        case .changed(let path): guard names.contains(path) else { return }
        case .overflow: break
        case .ended: return
        }
        if let timer { context.cancelTimer(timer) }
        timer = context.scheduleTimer(after: quietPeriod) { [weak self] in
            self?.timer = nil
            self?.handler()
        }
    }
}
