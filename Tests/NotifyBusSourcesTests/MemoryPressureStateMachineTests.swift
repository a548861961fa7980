import NotifyBus
import Testing

@testable import NotifyBusSources

private typealias Machine = MemoryPressureStateMachine

@Suite("Memory pressure levels")
struct MemoryPressureStateMachineTests {
    @Test func normalIsPublishedBeforeRunning() {
        var machine = Machine()
        #expect(machine.armed() == [.publish(.normal), .reportStatus(.running)])
        #expect(machine.level == .normal)
    }

    @Test func theLevelIsTheHighestTriggeredSinceNormal() {
        var machine = Machine()
        _ = machine.armed()
        #expect(machine.triggered(.some) == [.publish(.warning), .restartReturnTimer])
        // Again: nothing new to publish, but 10 s from now again.
        #expect(machine.triggered(.some) == [.restartReturnTimer])
        #expect(machine.triggered(.full) == [.publish(.critical), .restartReturnTimer])
        // A weaker trigger never lowers it.
        #expect(machine.triggered(.some) == [.restartReturnTimer])
        #expect(machine.level == .critical)
        #expect(machine.returnTimerFired() == [.publish(.normal)])
        #expect(machine.level == .normal)
        // A lone `full` goes straight to critical.
        #expect(machine.triggered(.full) == [.publish(.critical), .restartReturnTimer])
    }

    @Test func theReturnTimerIsOnlyWantedAwayFromNormal() {
        var machine = Machine()
        _ = machine.armed()
        #expect(machine.returnTimerFired() == [])
        _ = machine.triggered(.some)
        #expect(machine.returnTimerFired() == [.publish(.normal)])
        #expect(machine.returnTimerFired() == [])
    }

    @Test func refusedTriggersAreUnavailableWithTheReason() {
        var machine = Machine()
        #expect(machine.armingFailed("open /x: No such file or directory (errno 2)") == [
            .closeTriggers, .reportStatus(.unavailable(reason: "open /x: No such file or directory (errno 2)")),
        ])
        #expect(machine.level == nil)
        // Nothing counts until armed.
        #expect(machine.triggered(.full) == [])
        // Armed later (a re-read): normal, then running.
        #expect(machine.armed() == [.publish(.normal), .reportStatus(.running)])
    }

    @Test func aTriggerThatFailsLeavesTheLevelToItsTimer() {
        var machine = Machine()
        _ = machine.armed()
        _ = machine.triggered(.full)
        #expect(machine.triggerFailed("gone") == [.closeTriggers, .reportStatus(.unavailable(reason: "gone"))])
        // Reported once, whichever of the two descriptors says it.
        #expect(machine.triggerFailed("gone") == [])
        #expect(machine.returnTimerFired() == [.publish(.normal)])
        // Armed again (a re-read): the level is known, so only the status changes.
        #expect(machine.armed() == [.reportStatus(.running)])
    }

    @Test func stoppingCancelsTheTimerAndClosesTheTriggers() {
        var machine = Machine()
        _ = machine.armed()
        _ = machine.triggered(.some)
        #expect(machine.stopped() == [.cancelReturnTimer, .closeTriggers])
        #expect(machine.triggered(.full) == [])
    }
}
