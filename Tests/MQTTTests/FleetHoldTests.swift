import NotifyBus
import NotifyBusMQTT
import Testing

@testable import notifywatch

/// A fleet watcher's suspension without a broker: what is held, merged and flushed.
@Suite struct FleetHoldTests {
    func note(_ host: String, _ key: String, _ value: JSONValue, coalesced: Int = 1, previous: JSONValue? = nil) -> FleetEvent {
        .notification(FleetNotification(
            host: host, key: key, value: value, coalesced: coalesced, time: "t\(value.jsonText)", previous: previous,
            retained: false))
    }

    @Test func notificationsPassUntilSuspendedThenOnePerHostKeyInTheOrderOfTheLatest() {
        var hold = FleetHold()
        #expect(hold.receive(note("a", "k", 1)) == [.event(note("a", "k", 1))])
        #expect(hold.suspend() == [.suspended])
        #expect(hold.receive(note("a", "k", 2, coalesced: 3, previous: 1)).isEmpty)
        #expect(hold.receive(note("b", "k", 7)).isEmpty)
        #expect(hold.receive(note("a", "k", 4, coalesced: 2, previous: 2)).isEmpty)
        // Statuses are never held.
        #expect(hold.receive(.host("b", online: false)) == [.event(.host("b", online: false))])
        #expect(hold.heldCount == 2)
        let flush = hold.resume()
        // `a/k`: its latest value and time, 3 + 2 events, and the value printed before (1).
        #expect(flush == [
            .resumed(flushed: 2), .event(note("b", "k", 7)),
            .event(.notification(FleetNotification(
                host: "a", key: "k", value: 4, coalesced: 5, time: "t4", previous: 1, retained: false))),
        ])
        #expect(hold.resume().isEmpty && hold.heldCount == 0)
    }

    /// What the fleet watch prints for `event`: `JobControl`'s actions carried out on the hold,
    /// each printed `suspended` line reported back (a stop is left out: the test continues).
    func jobControl(_ event: JobControl.Event, _ jobs: inout JobControl, _ hold: inout FleetHold) -> [FleetHold.Output] {
        var printed: [FleetHold.Output] = []
        var pending = jobs.handle(event)
        while !pending.isEmpty {
            switch pending.removeFirst() {
            case .suspend:
                let outputs = hold.suspend()
                printed += outputs
                if outputs.contains(.suspended) { pending += jobs.handle(.suspendedLinePrinted) }
            case .resume: printed += hold.resume()
            case .reread, .awaitSuspendedLine, .stopProcess, .finish: break
            }
        }
        return printed
    }

    @Test func aContinueEndsOnlyAStopsSuspension() {
        var hold = FleetHold()
        var jobs = JobControl(rereadsOnContinue: false)
        #expect(jobControl(.suspendSignal, &jobs, &hold) == [.suspended])
        // Ctrl-Z while suspended by SIGUSR1, then fg: still suspended.
        #expect(jobControl(.stopSignal, &jobs, &hold).isEmpty)
        #expect(jobControl(.continueSignal, &jobs, &hold).isEmpty && hold.isSuspended)
        #expect(jobControl(.resumeSignal, &jobs, &hold) == [.resumed(flushed: 0)])
        // Ctrl-Z, then fg: resumed.
        #expect(jobControl(.stopSignal, &jobs, &hold) == [.suspended])
        _ = hold.receive(note("a", "k", 1))
        #expect(jobControl(.continueSignal, &jobs, &hold) == [.resumed(flushed: 1), .event(note("a", "k", 1))])
    }
}

/// What a fleet watch prints of what anybody published to the broker.
@Suite struct FleetOutputTests {
    @Test func controlCharactersInHostsAndKeysReachNoTerminal() {
        #expect(FleetOutput.printable("kiosk-1") == "kiosk-1")
        #expect(FleetOutput.printable("evil\u{1B}[2J\nkey\u{9B}") == "evil\\u{1b}[2J\\u{a}key\\u{9b}")
    }
}
