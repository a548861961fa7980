import Logging
import NotifyBusDaemon
import SystemSupport
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Waits until `/proc/PID/stat` says `state` (a signal takes effect a moment after `kill`).
private func waitUntil(_ pid: Int32, is state: ProcessRunState) async -> Bool {
    await eventually(timeout: .seconds(3)) { ProcessRunState.read(pid: pid) == state }
}

/// The watcher against real processes and the real cgroup v2 freezer. The freezer tests need root
/// and a writable cgroup2 mount: without them they are skipped, except in CI (`CI` set), where they
/// run and fail.
@Suite("ProcessLifeWatcher", .serialized)
struct ProcessLifeWatcherTests {
    // MARK: Stops (no freezer needed)

    @Test func aStopIsNoticedByCheckAndItsEndByThePoll() async throws {
        let harness = try WatcherHarness(mounts: [])
        let sleeper = try ChildProcess("/bin/sleep", ["600"], environment: ChildProcess.environment(with: [:]), log: "/dev/null")
        defer { sleeper.terminate(signal: SIGKILL) }
        let token = try await harness.follow(pid: sleeper.pid)
        #expect(try await harness.check(token))
        #expect(try await !harness.isPolling)

        kill(sleeper.pid, SIGSTOP)
        #expect(await waitUntil(sleeper.pid, is: .stopped))
        // Nothing tells of a stop: it is noticed when asked.
        #expect(try await harness.canRun(token))
        #expect(try await !harness.check(token))
        #expect(harness.changes(of: sleeper.pid) == [false])
        #expect(try await harness.isPolling)
        // Asked again while stopped: told nothing new.
        #expect(try await !harness.check(token))

        kill(sleeper.pid, SIGCONT)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false, true]))
        #expect(try await !harness.isPolling)
        #expect(try await harness.check(token))
        await harness.shutdown()
    }

    @Test func aProcessIsReadOncePerRoundOfTheLoop() async throws {
        let harness = try WatcherHarness(mounts: [])
        let sleeper = try ChildProcess("/bin/sleep", ["600"], environment: ChildProcess.environment(with: [:]), log: "/dev/null")
        defer { sleeper.terminate(signal: SIGKILL) }
        let first = try await harness.follow(pid: sleeper.pid)
        let second = try await harness.follow(pid: sleeper.pid)
        let pid = sleeper.pid
        // One job is one round: the process stops after the first check has read it, and the
        // checks later in the round (any following of the same process) answer from that read.
        let inOneRound = try await harness.withWatcher { watcher -> [Bool] in
            let before = watcher.check(first)
            kill(pid, SIGSTOP)
            var stopped = false
            for _ in 0..<3000 where !stopped {
                stopped = ProcessRunState.read(pid: pid) == .stopped
                if !stopped { usleep(1000) }
            }
            return [before, stopped, watcher.check(first), watcher.check(second)]
        }
        #expect(inOneRound == [true, true, true, true])
        // The next round reads it again.
        #expect(try await !harness.check(second))
        #expect(try await !harness.canRun(first))
        await harness.shutdown()
    }

    @Test func aProcessThatDiesWhileStoppedEndsThePoll() async throws {
        let harness = try WatcherHarness(mounts: [])
        let sleeper = try ChildProcess("/bin/sleep", ["600"], environment: ChildProcess.environment(with: [:]), log: "/dev/null")
        let token = try await harness.follow(pid: sleeper.pid)
        kill(sleeper.pid, SIGSTOP)
        #expect(await waitUntil(sleeper.pid, is: .stopped))
        #expect(try await !harness.check(token))
        #expect(try await harness.isPolling)
        sleeper.terminate(signal: SIGKILL)
        // The next tick reads it gone: no more polling, and it no longer holds its follower.
        #expect(await eventually(timeout: .seconds(3)) { (try? await harness.isPolling) == false })
        #expect(try await harness.check(token))
        #expect(harness.changes(of: sleeper.pid) == [false, true])
        // Following a PID that is not there: it counts as running, nothing breaks.
        let ghost = try await harness.follow(pid: 999_999_999)
        #expect(try await harness.check(ghost))
        #expect(try await !harness.isPolling)
        await harness.shutdown()
    }

    @Test func withoutACgroup2MountOnlyStopsAreFollowedAndThatIsSaidOnce() async throws {
        let log = LogRecorder()
        let harness = try WatcherHarness(mounts: [], logger: log.logger)
        let sleeper = try ChildProcess("/bin/sleep", ["600"], environment: ChildProcess.environment(with: [:]), log: "/dev/null")
        defer { sleeper.terminate(signal: SIGKILL) }
        let first = try await harness.follow(pid: sleeper.pid)
        _ = try await harness.follow(pid: getpid())
        #expect(try await harness.watchedFiles == [])
        #expect(try await !harness.withWatcher { $0.followsFreezer })
        let notices = log.all.filter { $0.level >= .notice }.map(\.message)
        #expect(notices.count == 1)
        #expect(notices.first?.contains("cgroup2") == true)
        kill(sleeper.pid, SIGSTOP)
        #expect(await waitUntil(sleeper.pid, is: .stopped))
        #expect(try await !harness.check(first))
        kill(sleeper.pid, SIGCONT)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false, true]))
        await harness.shutdown()
    }

    // MARK: The freezer

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aUsableCgroup2MountIsFound() throws {
        let mount = try #require(FreezerEnvironment.mount, "no writable cgroup2 mount (as root) in /proc/self/mountinfo")
        let directory = try #require(mount.directory(ofGroup: mount.root))
        #expect(readFile(directory + "/cgroup.procs") != nil)
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aFreezeAndAThawOfTheGroupAreReported() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let group = try cgroups.make()
        let sleeper = try cgroups.spawnSleeper(in: group)
        let harness = try WatcherHarness(mounts: [cgroups.mount])
        let token = try await harness.follow(pid: sleeper.pid)
        #expect(try await harness.watchedFiles == [try cgroups.directory(group) + "/cgroup.events"])
        #expect(try await harness.canRun(token))

        try cgroups.setFrozen(group, true)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false], timeout: .seconds(2)))
        #expect(try await !harness.canRun(token))
        // /proc says `S` for a frozen process: the check keeps what the group said.
        #expect(try await !harness.check(token))
        #expect(try await !harness.isPolling)

        try cgroups.setFrozen(group, false)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false, true], timeout: .seconds(2)))
        #expect(try await harness.check(token))
        await harness.shutdown()
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func anAncestorsFreezeIsReported() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let parent = try cgroups.make()
        let child = try cgroups.make("B")
        let sleeper = try cgroups.spawnSleeper(in: child)
        let harness = try WatcherHarness(mounts: [cgroups.mount])
        _ = try await harness.follow(pid: sleeper.pid)
        // Only the process's own group is watched.
        #expect(try await harness.watchedFiles == [try cgroups.directory(child) + "/cgroup.events"])

        try cgroups.setFrozen(parent, true)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false], timeout: .seconds(2)))
        try cgroups.setFrozen(parent, false)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false, true], timeout: .seconds(2)))
        await harness.shutdown()
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func processesOfOneGroupShareOneWatch() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let group = try cgroups.make()
        let first = try cgroups.spawnSleeper(in: group)
        let second = try cgroups.spawnSleeper(in: group)
        let harness = try WatcherHarness(mounts: [cgroups.mount])
        let firstToken = try await harness.follow(pid: first.pid)
        let secondToken = try await harness.follow(pid: second.pid)
        #expect(try await harness.watchedFiles.count == 1)

        try cgroups.setFrozen(group, true)
        #expect(await harness.wait(for: first.pid, toBe: [false], timeout: .seconds(2)))
        #expect(await harness.wait(for: second.pid, toBe: [false], timeout: .seconds(2)))
        // A follower that arrives while the group is frozen is told at once.
        let third = try await harness.follow(pid: second.pid)
        #expect(try await !harness.canRun(third))

        try await harness.unfollow(firstToken)
        try await harness.unfollow(third)
        #expect(try await harness.watchedFiles.count == 1)
        try await harness.unfollow(secondToken)
        #expect(try await harness.watchedFiles == [])
        // Unfollowed: a thaw is told to no one.
        try cgroups.setFrozen(group, false)
        try await Task.sleep(for: .milliseconds(300))
        #expect(harness.changes.all.map(\.canRun) == [false, false, false])
        await harness.shutdown()
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func aFrozenProcessThatIsStoppedRunsOnlyWhenBothEnd() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let group = try cgroups.make()
        let sleeper = try cgroups.spawnSleeper(in: group)
        let harness = try WatcherHarness(mounts: [cgroups.mount])
        let token = try await harness.follow(pid: sleeper.pid)
        kill(sleeper.pid, SIGSTOP)
        #expect(await waitUntil(sleeper.pid, is: .stopped))
        #expect(try await !harness.check(token))
        try cgroups.setFrozen(group, true)
        try await Task.sleep(for: .milliseconds(200))
        try cgroups.setFrozen(group, false)
        try await Task.sleep(for: .milliseconds(300))
        // Thawed, but still stopped.
        #expect(harness.changes(of: sleeper.pid) == [false])
        #expect(try await harness.isPolling)
        kill(sleeper.pid, SIGCONT)
        #expect(await harness.wait(for: sleeper.pid, toBe: [false, true]))
        #expect(try await !harness.isPolling)
        await harness.shutdown()
    }

    @Test(.enabled(if: FreezerEnvironment.testsRun)) func nothingIsArmedWhileNothingChanges() async throws {
        let cgroups = try freezerGroups()
        defer { cgroups.cleanUp() }
        let group = try cgroups.make()
        let inGroup = try cgroups.spawnSleeper(in: group)
        let inRoot = try ChildProcess("/bin/sleep", ["600"], environment: ChildProcess.environment(with: [:]), log: "/dev/null")
        defer { inRoot.terminate(signal: SIGKILL) }
        let harness = try WatcherHarness(mounts: [cgroups.mount])
        let tokens = [try await harness.follow(pid: inGroup.pid), try await harness.follow(pid: inRoot.pid)]
        for token in tokens { #expect(try await harness.check(token)) }
        try await Task.sleep(for: .milliseconds(1500))
        #expect(try await !harness.isPolling)
        #expect(harness.changes.all == [])
        // After a stop and its end, the timer is gone again.
        kill(inGroup.pid, SIGSTOP)
        #expect(await waitUntil(inGroup.pid, is: .stopped))
        #expect(try await !harness.check(tokens[0]))
        kill(inGroup.pid, SIGCONT)
        #expect(await harness.wait(for: inGroup.pid, toBe: [false, true]))
        #expect(try await !harness.isPolling)
        await harness.shutdown()
    }
}
