import NotifyBus
import NotifyBusSources
import Testing

@Suite("Source status and lifecycle")
struct SourceLifecycleTests {
    @Test func reporterStartsWithTheCurrentStatusSkipsRepeatsAndEndsOnFinish() async {
        let reporter = SourceStatusReporter()
        let updates = reporter.updates()
        reporter.report(.unavailable(reason: "no power_supply devices"))
        reporter.report(.unavailable(reason: "no power_supply devices"))
        reporter.report(.running)
        reporter.finish()
        var seen: [SourceStatus] = []
        for await status in updates { seen.append(status) }
        #expect(seen == [
            .notStarted, .unavailable(reason: "no power_supply devices"), .running,
        ])
        // A reader that comes after the end gets the current status, then the end.
        var late: [SourceStatus] = []
        for await status in reporter.updates() { late.append(status) }
        #expect(late == [.running])
        #expect(reporter.current == .running)
    }

    @Test func statusNamesAndReasonsFollowTheContract() {
        #expect(SourceStatus.running.name == "running")
        #expect(SourceStatus.running.reason == nil)
        #expect(SourceStatus.unavailable(reason: "r").name == "unavailable")
        #expect(SourceStatus.failed(reason: "udev_new: …").name == "failed")
        #expect(SourceStatus.failed(reason: "x").reason == "x")
    }

    /// In this process (no umockdev): whatever this machine has, the source reports a status,
    /// refuses a second `run()`, and returns from `run()` when its task is cancelled, leaving a
    /// shared loop running.
    @Test func runEndsOnCancellationAndRefusesToRunTwice() async throws {
        let bus = NotificationBus()
        let loop = try SourceLoop(name: "lifecycle")
        let source = PowerSupplySource(bus: bus, loop: loop, configuration: .init(rereadInterval: nil))
        #expect(source.name == "power")
        #expect(source.keyPatterns.map(\.text) == ["battery/*/state", "battery/*/level", "power/*/online"])
        #expect(source.status == .notStarted)

        var statuses: [SourceStatus] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            let updates = source.statusUpdates()
            group.addTask { try await source.run() }
            for await status in updates {
                statuses.append(status)
                if status != .notStarted { break }
            }
            await #expect(throws: SourceError.alreadyRunning(source: "power")) { try await source.run() }
            await source.reread()  // returns once done, whatever there is to read
            group.cancelAll()
            try await group.waitForAll()
        }
        let reported = try #require(statuses.last)
        #expect(reported != .notStarted)
        #expect(["running", "unavailable", "failed"].contains(reported.name))
        #expect(loop.isRunning)  // a shared loop is the caller's to stop
        // Not running any more: reread() does nothing and returns; a new stream ends at once.
        await source.reread()
        var after: [SourceStatus] = []
        for await status in source.statusUpdates() { after.append(status) }
        #expect(after == [reported])
        await loop.shutdown()
    }
}
