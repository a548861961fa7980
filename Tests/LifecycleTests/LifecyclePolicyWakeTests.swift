import NotifyBus
import NotifyBusLifecycle
import Testing

/// The rules of "Woken when something needs the app" and "Background time" (the article
/// Freezing background apps), on the policy driven without I/O.
@Suite struct LifecyclePolicyWakeTests {
    typealias Action = LifecyclePolicyTests.Action
    typealias Driver = LifecyclePolicyTests.Driver
    static let a = LifecyclePolicyTests.a
    static let b = LifecyclePolicyTests.b
    static func window(_ id: UInt64, _ app: String, active: Bool, groups: [String]) -> LifecyclePolicy.Window {
        LifecyclePolicyTests.window(id, app, active: active, groups: groups)
    }

    // MARK: Woken by a message

    @Test func aMessageThawsAFrozenAppWokenIsPublishedFirstAndItIsFrozenAgainAfterTheGrace() {
        var d = Driver()
        d.frozenA()
        #expect(d.policy.watchedGroups == [Self.a])
        #expect(d.at(20, .message(group: Self.a)) == [
            .publish(appID: "A", .init(.background, reason: .woken)), .thaw(group: Self.a), .arm(.seconds(30)),
        ])
        // Still watched within its grace: a further message restarts it.
        #expect(d.policy.watchedGroups == [Self.a])
        #expect(d.until(29.9) == [])
        // Past its grace: no reason applies any more, and it is frozen at once.
        #expect(d.until(30) == [.publish(appID: "A", .init(.background)), .freeze(group: Self.a), .arm(.seconds(35))])
        #expect(d.at(30.1, .frozen(group: Self.a, true)) == [.publish(appID: "A", .init(.frozen)), .disarm])
    }

    @Test func aFurtherMessageWithinTheGraceRestartsIt() {
        var d = Driver()
        d.frozenA()
        _ = d.at(20, .message(group: Self.a))
        #expect(d.at(25, .message(group: Self.a)) == [.arm(.seconds(35))])
        #expect(d.until(30) == [])
        #expect(d.until(35).contains(.freeze(group: Self.a)))
    }

    @Test func aMessageToAnAppThatRunsChangesNothing() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        #expect(d.at(5, .message(group: Self.a)) == [])
        #expect(d.at(6, .message(group: "/unknown")) == [])
        #expect(d.policy.watchedGroups.isEmpty)
        #expect(d.until(10).first == .freeze(group: Self.a))
    }

    @Test func anActivationWithinTheGraceIsTheForegroundAndTheDelayCountsAfresh() {
        var d = Driver()
        d.frozenA()
        _ = d.at(20, .message(group: Self.a))
        #expect(d.at(22, .windows([Self.window(1, "A", active: true, groups: [Self.a])])) == [
            .publish(appID: "A", .init(.foreground)), .disarm,
        ])
        #expect(d.policy.watchedGroups.isEmpty)
        _ = d.at(23, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        #expect(d.policy.armed == .seconds(33))
    }

    @Test func aThawBySomeoneElseIsWokenAndFrozenAgainAfterTheGrace() {
        var d = Driver(wakeGrace: 4)
        d.frozenA()
        #expect(d.at(20, .thawedElsewhere(group: Self.a)) == [
            .publish(appID: "A", .init(.background, reason: .woken)), .arm(.seconds(24)),
        ])
        #expect(d.until(24) == [.publish(appID: "A", .init(.background)), .freeze(group: Self.a), .arm(.seconds(29))])
    }

    @Test func losingTheWakeWatchThawsEveryFrozenApp() {
        var d = Driver()
        d.frozenA()
        let actions = d.at(20, .wakeWatchLost)
        #expect(actions.contains(.thaw(group: Self.a)))
        #expect(d.policy.published["A"] == .init(.background, reason: .woken))
    }

    // MARK: Background tasks

    @Test func aTaskKeepsItsAppRunningAndItsEndFreezesItAtOnce() throws {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        let (grant, actions) = d.begin(2, group: Self.a)
        #expect(try grant.get().task == 1)
        #expect(try grant.get().seconds == 30)
        #expect(actions == [])
        #expect(d.until(10) == [.publish(appID: "A", .init(.background, reason: .task)), .arm(.seconds(27))])
        #expect(d.policy.frozenGroups.isEmpty)
        let (ended, after) = d.end(15, task: 1)
        #expect((try? ended.get()) != nil)
        #expect(after == [.publish(appID: "A", .init(.background)), .freeze(group: Self.a), .arm(.seconds(20))])
    }

    @Test func aTaskOpenedInTheDelayDoesNotRestartIt() throws {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        let task = try d.begin(2, group: Self.a).0.get().task
        _ = d.end(4, task: task)
        #expect(d.policy.armed == .seconds(10))
        #expect(d.until(10).first == .freeze(group: Self.a))
    }

    @Test func theConnectionIsToldFiveSecondsBeforeTheGrantEndsAndThenTheAppIsFrozen() throws {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        let task = try d.begin(1, group: Self.a, connection: ":1.5").0.get().task
        _ = d.until(10)
        #expect(d.until(26) == [.expiring(task: task, connection: ":1.5", seconds: 5), .arm(.seconds(31))])
        #expect(d.until(31) == [.publish(appID: "A", .init(.background)), .freeze(group: Self.a), .arm(.seconds(36))])
        #expect(d.policy.openTasks == 0)
    }

    @Test func aGrantShorterThanTheWarningIsToldAtOnce() throws {
        var d = Driver(taskLimit: 1)
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        let (grant, actions) = d.begin(1, group: Self.a)
        #expect(try grant.get().seconds == 1)
        #expect(actions.first == .expiring(task: 1, connection: ":1.9", seconds: 1))
        #expect(d.policy.armed == .seconds(2))
    }

    @Test func aTaskBegunInTheForegroundCountsFromTheMomentTheAppLeavesIt() throws {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: true, groups: [Self.a])]))
        let (grant, actions) = d.begin(1, group: Self.a)
        #expect(try grant.get().seconds == 30)
        #expect(actions == [])
        #expect(d.policy.armed == nil)
        // In front for a minute, then in the background: 30 s from then.
        _ = d.at(60, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        #expect(d.policy.armed == .seconds(70))
        _ = d.until(70)
        #expect(d.policy.published["A"] == .init(.background, reason: .task))
        #expect(d.until(85).first == .expiring(task: 1, connection: ":1.9", seconds: 5))
        #expect(d.until(90).contains(.freeze(group: Self.a)))
    }

    @Test func aTaskOpenedWhileFreezingThawsTheApp() throws {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.until(10)
        let (_, actions) = d.begin(10.01, group: Self.a)
        #expect(actions.contains(.thaw(group: Self.a)))
    }

    @Test func sixteenTasksPerAppAndOnlyItsOwnConnectionEndsOne() throws {
        var d = Driver()
        for _ in 0..<LifecyclePolicy.tasksPerApp { _ = try d.begin(1, group: Self.a).0.get() }
        #expect(throws: LifecyclePolicy.TaskRefusal.tooMany) { try d.begin(1, group: Self.a).0.get() }
        // Another app has its own sixteen.
        #expect(try d.begin(1, group: Self.b).0.get().task == 17)
        #expect(throws: LifecyclePolicy.TaskRefusal.notOpen) { try d.end(2, task: 1, connection: ":1.10").0.get() }
        #expect(throws: LifecyclePolicy.TaskRefusal.notOpen) { try d.end(2, task: 99).0.get() }
        try d.end(2, task: 1).0.get()
        #expect(throws: LifecyclePolicy.TaskRefusal.notOpen) { try d.end(2, task: 1).0.get() }
        #expect(try d.begin(3, group: Self.a).0.get().task == 18)
    }

    @Test func aConnectionLeavingEndsItsTasks() throws {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = try d.begin(1, group: Self.a, connection: ":1.5").0.get()
        _ = try d.begin(1, group: Self.a, connection: ":1.5").0.get()
        _ = d.until(10)
        #expect(d.at(12, .connectionLeft(":1.5")) == [.publish(appID: "A", .init(.background)), .freeze(group: Self.a), .arm(.seconds(17))])
        #expect(d.policy.openTasks == 0)
    }
}
