import NotifyBus
import NotifyBusLifecycle
import Testing

/// The policy driven without I/O: every rule of the specification's Freezing background apps
/// article as one test.
@Suite struct LifecyclePolicyTests {
    typealias Action = LifecyclePolicy.Action
    static let a = "/app.slice/app-test-org.example.A-1.scope"
    static let b = "/app.slice/app-test-org.example.B-1.scope"

    /// A policy and a clock, seconds from zero.
    struct Driver {
        var policy: LifecyclePolicy
        var now = Duration.zero

        init(delay: Int = 10, exempt: Set<String> = [], wakeGrace: Int = 10, taskLimit: Int = 30) {
            policy = LifecyclePolicy(
                delay: .seconds(delay), exempt: exempt, wakeGrace: .seconds(wakeGrace), taskLimit: .seconds(taskLimit))
        }

        /// `beginTask` at `seconds`: the grant and the actions.
        mutating func begin(_ seconds: Double, group: String, connection: String = ":1.9")
            -> (Result<LifecyclePolicy.TaskGrant, LifecyclePolicy.TaskRefusal>, [Action])
        {
            now = .milliseconds(Int64(seconds * 1000))
            return policy.beginTask(group: group, connection: connection, now: now)
        }

        /// `endTask` at `seconds`.
        mutating func end(_ seconds: Double, task: UInt32, connection: String = ":1.9")
            -> (Result<Void, LifecyclePolicy.TaskRefusal>, [Action])
        {
            now = .milliseconds(Int64(seconds * 1000))
            return policy.endTask(task, connection: connection, now: now)
        }

        /// A: frozen at 10 (in the background from 0, delay 10).
        mutating func frozenA() {
            _ = at(0, .windows([LifecyclePolicyTests.window(1, "A", active: false, groups: [LifecyclePolicyTests.a])]))
            _ = until(10)
            _ = at(10, .frozen(group: LifecyclePolicyTests.a, true))
        }

        mutating func at(_ seconds: Double, _ event: LifecyclePolicy.Event) -> [Action] {
            now = .milliseconds(Int64(seconds * 1000))
            return policy.handle(event, now: now)
        }

        /// The deadline, taken when it is due.
        mutating func until(_ seconds: Double) -> [Action] {
            guard let armed = policy.armed, armed <= .milliseconds(Int64(seconds * 1000)) else { return [] }
            return at(Double(armed.components.seconds) + Double(armed.components.attoseconds) / 1e18, .deadline)
        }
    }

    static func window(_ id: UInt64, _ app: String, active: Bool, groups: [String]) -> LifecyclePolicy.Window {
        .init(id: id, appID: app, activated: active, groups: groups)
    }

    static func publishes(_ actions: [Action]) -> [String: AppLifecycle] {
        var result: [String: AppLifecycle] = [:]
        for case .publish(let app, let value) in actions { result[app] = value }
        return result
    }

    @Test func anAppIsFrozenDelaySecondsAfterItLeavesTheForeground() {
        var d = Driver()
        #expect(d.at(0, .windows([Self.window(1, "A", active: true, groups: [Self.a])])) == [.publish(appID: "A", .init(.foreground))])
        #expect(d.at(1, .windows([Self.window(1, "A", active: false, groups: [Self.a])])) == [.publish(appID: "A", .init(.background)), .arm(.seconds(11))])
        #expect(d.until(10.9) == [])
        #expect(d.until(11) == [.freeze(group: Self.a), .arm(.seconds(16))])
        #expect(d.at(11.02, .frozen(group: Self.a, true)) == [.publish(appID: "A", .init(.frozen)), .disarm])
        #expect(d.policy.armed == nil)
    }

    @Test func anActivationRestartsTheCount() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.at(5, .windows([Self.window(1, "A", active: true, groups: [Self.a])]))
        #expect(d.policy.armed == nil)
        #expect(d.at(6, .windows([Self.window(1, "A", active: false, groups: [Self.a])])).contains(.arm(.seconds(16))))
        #expect(d.until(15) == [])
        #expect(d.until(16).first == .freeze(group: Self.a))
    }

    @Test func anActivationThawsAtOnceWithForegroundPublishedFirst() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.until(10)
        _ = d.at(10, .frozen(group: Self.a, true))
        #expect(d.at(20, .windows([Self.window(1, "A", active: true, groups: [Self.a])])) == [
            .publish(appID: "A", .init(.foreground)), .thaw(group: Self.a),
        ])
    }

    @Test func anExemptAppIsNeverFrozenAndSaysWhyPastTheDelay() {
        var d = Driver(exempt: ["A"])
        #expect(d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])])) == [
            .publish(appID: "A", .init(.background)), .arm(.seconds(10)),
        ])
        #expect(d.until(10) == [.publish(appID: "A", .init(.background, reason: .exempt))])
        #expect(d.policy.frozenGroups.isEmpty)
    }

    @Test func aPlayingPlayerKeepsItRunningAndItsEndRestartsTheCount() {
        var d = Driver()
        _ = d.at(0, .playingGroups([Self.a]))
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        #expect(d.until(10) == [.publish(appID: "A", .init(.background, reason: .media))])
        #expect(d.at(30, .playingGroups([])) == [.publish(appID: "A", .init(.background)), .arm(.seconds(40))])
        #expect(d.until(40).first == .freeze(group: Self.a))
    }

    @Test func playingWhileFrozenThawsIt() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.until(10)
        _ = d.at(10, .frozen(group: Self.a, true))
        let actions = d.at(12, .playingGroups([Self.a]))
        #expect(actions.contains(.thaw(group: Self.a)))
    }

    @Test func anAppWithoutAnAppUnitIsNeverFrozen() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [])]))
        #expect(d.until(10) == [.publish(appID: "A", .init(.background, reason: .noAppUnit))])
    }

    @Test func aProtectedCgroupIsNeverFrozen() {
        var d = Driver()
        _ = d.at(0, .protectedGroups([Self.a + "/sub"]))
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        #expect(d.until(10) == [.publish(appID: "A", .init(.background, reason: .protected))])
    }

    @Test func aSharedCgroupWaitsForEveryWindowInIt() {
        var d = Driver()
        _ = d.at(0, .windows([
            Self.window(1, "A", active: false, groups: [Self.a]), Self.window(2, "B", active: true, groups: [Self.a]),
        ]))
        #expect(Self.publishes(d.until(10)) == ["A": .init(.background, reason: .shared)])
        #expect(d.policy.frozenGroups.isEmpty)
        _ = d.at(20, .windows([
            Self.window(1, "A", active: false, groups: [Self.a]), Self.window(2, "B", active: false, groups: [Self.a]),
        ]))
        #expect(d.policy.armed == .seconds(30))
        #expect(d.until(30).contains(.freeze(group: Self.a)))
        let frozen = Self.publishes(d.at(30.1, .frozen(group: Self.a, true)))
        #expect(frozen == ["A": .init(.frozen), "B": .init(.frozen)])
    }

    @Test func aCgroupFrozenBySomeoneElseIsLeftAlone() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.until(10)
        #expect(d.at(10, .notFrozen(group: Self.a, failed: false)) == [.disarm])
        #expect(d.policy.frozenGroups.isEmpty)
        #expect(d.policy.published["A"] == .init(.background))
        #expect(d.policy.armed == nil)
        // Tried again only after its next time in the foreground.
        _ = d.at(50, .windows([Self.window(1, "A", active: true, groups: [Self.a])]))
        _ = d.at(51, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        #expect(d.until(61).first == .freeze(group: Self.a))
    }

    @Test func aFreezeNotConfirmedInFiveSecondsIsUndoneAndSaidFailed() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.until(10)
        #expect(d.until(15) == [.publish(appID: "A", .init(.background, reason: .failed)), .thaw(group: Self.a)])
    }

    @Test func closingTheLastWindowThawsAndSaysClosedOnce() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: false, groups: [Self.a])]))
        _ = d.until(10)
        _ = d.at(10, .frozen(group: Self.a, true))
        #expect(d.at(12, .windows([])) == [.publish(appID: "A", .init(.closed)), .thaw(group: Self.a)])
        #expect(d.at(13, .windows([])) == [])
    }

    @Test func theLockCountsAsNoWindowActivated() {
        var d = Driver()
        _ = d.at(0, .windows([Self.window(1, "A", active: true, groups: [Self.a])]))
        #expect(d.at(5, .locked(true)) == [.publish(appID: "A", .init(.background)), .arm(.seconds(15))])
        _ = d.until(15)
        _ = d.at(15, .frozen(group: Self.a, true))
        #expect(d.at(40, .locked(false)) == [.publish(appID: "A", .init(.foreground)), .thaw(group: Self.a)])
    }

    @Test func aLostCompositorThawsEverythingAndClosesEveryApp() {
        var d = Driver()
        _ = d.at(0, .windows([
            Self.window(1, "A", active: false, groups: [Self.a]), Self.window(2, "B", active: true, groups: [Self.b]),
        ]))
        _ = d.until(10)
        _ = d.at(10, .frozen(group: Self.a, true))
        #expect(d.at(11, .compositorLost) == [
            .publish(appID: "A", .init(.closed)), .publish(appID: "B", .init(.closed)), .thaw(group: Self.a),
        ])
    }

    @Test func stoppingThawsEverythingItFroze() {
        var d = Driver()
        _ = d.at(0, .windows([
            Self.window(1, "A", active: false, groups: [Self.a]), Self.window(2, "B", active: false, groups: [Self.b]),
        ]))
        _ = d.until(10)
        _ = d.at(10, .frozen(group: Self.a, true))
        #expect(d.at(11, .stop) == [.thaw(group: Self.a), .thaw(group: Self.b), .disarm])
        #expect(d.at(12, .windows([])) == [])
    }

    @Test func theKeyEscapesPercentAndSlash() {
        #expect(AppLifecycle.key(of: "org.example.App") == "app/org.example.App/lifecycle")
        #expect(AppLifecycle.key(of: "a/b%c") == "app/a%2Fb%25c/lifecycle")
        #expect(AppLifecycle(.background, reason: .noAppUnit).value == .object(["state": "background", "reason": "no-app-unit"]))
    }
}
