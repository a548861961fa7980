import Testing

@testable import NotifyBusDaemon

private typealias State = ProcessLifeState<String>
private typealias Action = State.Action

/// Process `pid`, started at tick 1.
private func p(_ pid: Int32, started: UInt64 = 1) -> ProcessIdentity { ProcessIdentity(pid: pid, startTime: started) }

@Suite("ProcessLifeState")
struct ProcessLifeStateTests {
    @Test func followersOfOneGroupShareItsWatch() {
        var state = State()
        #expect(state.follow("a", process: p(10), group: "/app.slice/one") == [.watchGroup("/app.slice/one"), .readGroup("/app.slice/one")])
        #expect(state.groupEventsRead("/app.slice/one", frozen: false) == [])
        #expect(state.follow("b", process: p(11), group: "/app.slice/one") == [])
        #expect(state.follow("c", process: p(12), group: "/app.slice/two") == [.watchGroup("/app.slice/two"), .readGroup("/app.slice/two")])
        #expect(state.groups["/app.slice/one"]?.members == ["a", "b"])
        // A freeze of the shared group reaches both followers, in the order they came.
        #expect(state.groupEventsRead("/app.slice/one", frozen: true) == [.notify("a", canRun: false), .notify("b", canRun: false)])
        #expect(state.canRun("a") == false)
        #expect(state.canRun("c") == true)
    }

    @Test func aProcessMovedToAnotherGroupIsFollowedThere() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/session.scope")
        _ = state.follow("b", process: p(11), group: "/session.scope")
        _ = state.groupEventsRead("/session.scope", frozen: false)
        // Moved into a scope of its own: the old group keeps its watch for the other follower.
        #expect(state.moved("a", to: "/app.slice/app-x.scope") == [.watchGroup("/app.slice/app-x.scope"), .readGroup("/app.slice/app-x.scope")])
        #expect(state.moved("a", to: "/app.slice/app-x.scope") == [])
        #expect(state.groupEventsRead("/app.slice/app-x.scope", frozen: true) == [.notify("a", canRun: false)])
        #expect(state.groupEventsRead("/session.scope", frozen: true) == [.notify("b", canRun: false)])
        // The last follower leaving a group releases its watch; a move to a frozen group tells at once.
        #expect(state.moved("b", to: "/app.slice/app-x.scope") == [.unwatchGroup("/session.scope")])
        #expect(state.groups["/app.slice/app-x.scope"]?.members == ["a", "b"])
    }

    @Test func aFollowerJoiningAFrozenGroupIsToldAtOnce() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/g")
        _ = state.groupEventsRead("/g", frozen: true)
        #expect(state.follow("b", process: p(11), group: "/g") == [.notify("b", canRun: false)])
    }

    @Test func theRootGroupAndNoGroupAreNeverWatched() {
        var state = State()
        #expect(state.follow("root", process: p(10), group: "/") == [])
        #expect(state.follow("none", process: p(11), group: nil) == [])
        #expect(state.groups.isEmpty)
        #expect(state.groupEventsRead("/", frozen: true) == [])
        #expect(state.canRun("root") && state.canRun("none"))
    }

    @Test func anAncestorsFreezeIsSeenThroughTheChildsEvents() {
        // Freezing /A sets `frozen 1` in /A/B's cgroup.events: only /A/B itself is watched.
        var state = State()
        #expect(state.follow("child", process: p(10), group: "/A/B") == [.watchGroup("/A/B"), .readGroup("/A/B")])
        #expect(state.follow("parent", process: p(11), group: "/A") == [.watchGroup("/A"), .readGroup("/A")])
        #expect(state.groupChanged("/A/B") == [.readGroup("/A/B")])
        #expect(state.groupEventsRead("/A/B", frozen: true) == [.notify("child", canRun: false)])
        #expect(state.groupEventsRead("/A", frozen: true) == [.notify("parent", canRun: false)])
        #expect(state.groupEventsRead("/A", frozen: false) == [.notify("parent", canRun: true)])
        #expect(state.groupEventsRead("/A/B", frozen: false) == [.notify("child", canRun: true)])
    }

    @Test func aStopWhileFrozenKeepsItFromRunningUntilBothEnd() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/g")
        #expect(state.groupEventsRead("/g", frozen: true) == [.notify("a", canRun: false)])
        #expect(state.checkRequested(process: p(10)) == [.readProcess(p(10))])
        #expect(state.processStatRead(process: p(10), .stopped) == [.startPolling])
        #expect(state.groupEventsRead("/g", frozen: false) == [])
        #expect(state.canRun("a") == false)
        #expect(state.pollTick() == [.readProcess(p(10))])
        #expect(state.processStatRead(process: p(10), .stopped) == [])
        #expect(state.processStatRead(process: p(10), .running) == [.notify("a", canRun: true), .stopPolling])
        // And the other way round: thawed last.
        _ = state.groupEventsRead("/g", frozen: true)
        _ = state.processStatRead(process: p(10), .stopped)
        #expect(state.processStatRead(process: p(10), .running) == [.stopPolling])
        #expect(state.groupEventsRead("/g", frozen: false) == [.notify("a", canRun: true)])
    }

    @Test func unfollowingTheLastFollowerReleasesTheWatch() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/g")
        _ = state.follow("b", process: p(11), group: "/g")
        #expect(state.unfollow("a") == [])
        #expect(state.unfollow("a") == [])
        #expect(state.unfollow("b") == [.unwatchGroup("/g")])
        #expect(state.groups.isEmpty && state.followers.isEmpty && state.processes.isEmpty)
        // A read that arrives after the release changes nothing.
        #expect(state.groupEventsRead("/g", frozen: true) == [])
        #expect(state.groupChanged("/g") == [])
        // Following again watches again.
        #expect(state.follow("c", process: p(12), group: "/g") == [.watchGroup("/g"), .readGroup("/g")])
    }

    @Test func unfollowingTheLastStoppedProcessStopsThePoll() {
        var state = State()
        _ = state.follow("a", process: p(10), group: nil)
        _ = state.follow("b", process: p(10), group: nil)
        #expect(state.processStatRead(process: p(10), .stopped) == [.notify("a", canRun: false), .notify("b", canRun: false), .startPolling])
        #expect(state.unfollow("a") == [])
        #expect(state.isPolling)
        #expect(state.unfollow("b") == [.stopPolling])
        #expect(!state.isPolling)
    }

    @Test func thePollRunsOnlyWhileAProcessIsStopped() {
        var state = State()
        _ = state.follow("a", process: p(10), group: nil)
        _ = state.follow("b", process: p(11), group: nil)
        #expect(!state.isPolling)
        #expect(state.pollTick() == [])
        #expect(state.processStatRead(process: p(10), .running) == [])
        #expect(!state.isPolling)
        #expect(state.processStatRead(process: p(10), .stopped) == [.notify("a", canRun: false), .startPolling])
        #expect(state.processStatRead(process: p(11), .stopped) == [.notify("b", canRun: false)])
        #expect(state.pollTick() == [.readProcess(p(10)), .readProcess(p(11))])
        #expect(state.processStatRead(process: p(11), .running) == [.notify("b", canRun: true)])
        #expect(state.isPolling)
        #expect(state.pollTick() == [.readProcess(p(10))])
        #expect(state.processStatRead(process: p(10), .running) == [.notify("a", canRun: true), .stopPolling])
        #expect(!state.isPolling)
        #expect(state.pollTick() == [])
    }

    @Test func onlyChangesAreNotified() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/g")
        #expect(state.groupEventsRead("/g", frozen: false) == [])
        #expect(state.groupEventsRead("/g", frozen: nil) == [])
        #expect(state.groupEventsRead("/g", frozen: true) == [.notify("a", canRun: false)])
        #expect(state.groupEventsRead("/g", frozen: true) == [])
        // Unreadable (the group was removed) counts as not frozen.
        #expect(state.groupEventsRead("/g", frozen: nil) == [.notify("a", canRun: true)])
        #expect(state.groupEventsRead("/g", frozen: false) == [])
        #expect(state.processStatRead(process: p(10), .running) == [])
        // A read that says nothing clear changes nothing.
        _ = state.processStatRead(process: p(10), .stopped)
        #expect(state.processStatRead(process: p(10), nil) == [])
        #expect(state.canRun("a") == false)
        // Reads of processes nobody follows change nothing.
        #expect(state.processStatRead(process: p(99), .stopped) == [])
        #expect(state.checkRequested(process: p(99)) == [])
    }

    @Test func aProcessThatIsGoneIsNotReadAgainAndHoldsNothing() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/g")
        _ = state.groupEventsRead("/g", frozen: false)
        _ = state.processStatRead(process: p(10), .stopped)
        // It exited while stopped: its follower is no longer held, and it is never read again.
        #expect(state.processStatRead(process: p(10), .gone) == [.notify("a", canRun: true), .stopPolling])
        #expect(state.checkRequested(process: p(10)) == [])
        #expect(state.pollTick() == [])
        #expect(state.processStatRead(process: p(10), .stopped) == [])
        // Nor does its group's freeze hold it any more.
        #expect(state.groupEventsRead("/g", frozen: true) == [])
        #expect(state.canRun("a") == true)
        #expect(state.unfollow("a") == [.unwatchGroup("/g")])
    }

    @Test func aReusedPIDIsAnotherProcessAndInheritsNothing() {
        var state = State()
        _ = state.follow("old", process: p(10, started: 5), group: nil)
        _ = state.processStatRead(process: p(10, started: 5), .stopped)
        #expect(state.processStatRead(process: p(10, started: 5), .gone) == [.notify("old", canRun: true), .stopPolling])
        // A new process with the same PID is followed afresh: not gone, not stopped.
        #expect(state.follow("new", process: p(10, started: 9), group: nil) == [])
        #expect(state.canRun("new") == true)
        #expect(state.checkRequested(process: p(10, started: 9)) == [.readProcess(p(10, started: 9))])
        #expect(state.processStatRead(process: p(10, started: 9), .stopped) == [.notify("new", canRun: false), .startPolling])
        #expect(state.canRun("old") == true)
    }

    @Test func anOverflowRereadsEveryGroup() {
        var state = State()
        _ = state.follow("a", process: p(10), group: "/b")
        _ = state.follow("b", process: p(11), group: "/a")
        #expect(state.allGroupsChanged() == [.readGroup("/a"), .readGroup("/b")])
    }
}
