import EpollLoop
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SmallFileTests {
    @Test func readsUpToTheLimitAndSaysWhyNot() throws {
        let directory = try makeTemporaryDirectory("system-support")
        defer { removeTree(directory) }
        let path = directory + "/file"
        try writeFile(path, String(repeating: "x", count: 10_000))
        #expect((try? SmallFile.contents(of: path).get())?.count == 10_000)
        #expect((try? SmallFile.contents(of: path, limit: 4_097).get())?.count == 4_097)
        #expect(SmallFile.text(of: path, limit: 3) == "xxx")
        #expect(SmallFile.isReadable(path))
        guard case .failure(let error) = SmallFile.contents(of: directory + "/absent") else {
            Issue.record("an absent file was read")
            return
        }
        #expect(error.isMissing)
        #expect(!SmallFile.isReadable(directory + "/absent"))
    }

    @Test func readsADescriptorToItsEnd() {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        var bytes = Array("line\n".utf8)
        _ = write(ends[1], &bytes, bytes.count)
        close(ends[1])
        #expect((try? SmallFile.contents(ofDescriptor: ends[0], limit: .max).get()) == bytes)
        close(ends[0])
    }
}

@Suite struct InotifyWatchesTests {
    /// Watches made and events told on a loop thread; the events land in `events`.
    final class Bed: Sendable {
        let loop: EventLoopThread
        let events = Recorder<InotifyWatches.Event>()
        private let key = LoopLocalKey<InotifyWatches>()

        init() throws {
            loop = try EventLoopThread(name: "inotify-test")
            let (key, events) = (self.key, self.events)
            try loop.execute { context in
                context[local: key] = try? InotifyWatches(context: context) { events.append($0) }
            }
        }

        /// `InotifyWatches.add` on the loop.
        func add(_ path: String, for changes: InotifyWatches.Changes) async throws -> Int32? {
            let key = self.key
            return try await loop.submit { context in
                guard let watches = context[local: key] else { return EBADF }
                return watches.add(path, for: changes)
            }
        }
    }

    @Test func filesForWritesAndDirectoriesForTheirEntries() async throws {
        let directory = try makeTemporaryDirectory("system-support")
        defer { removeTree(directory) }
        let file = directory + "/watched"
        try writeFile(file, "a")
        let bed = try Bed()
        #expect(try await bed.add(file, for: .modified) == nil)
        #expect(try await bed.add(directory + "/absent", for: .modified) == ENOENT)
        try writeFile(file, "b")
        #expect(await bed.events.wait { $0.contains(.changed(file)) })
        unlink(file)
        #expect(await bed.events.wait { $0.contains(.ended(file)) })

        #expect(try await bed.add(directory, for: .entries) == nil)
        try writeFile(directory + "/new", "c")
        #expect(await bed.events.wait { $0.contains(.changed(directory + "/new")) })
        await bed.loop.shutdown()
    }
}
