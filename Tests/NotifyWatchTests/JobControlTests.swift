import Testing

@testable import notifywatch

/// notifywatch's job control without signals or a subscription: what each signal and each
/// printed `suspended` line makes it do (specification: notifywatch output, "Signals").
@Suite struct JobControlTests {
    @Test func usr1SuspendsAndUsr2ResumesEachOnce() {
        var jobs = JobControl(rereadsOnContinue: true)
        #expect(jobs.handle(.suspendSignal) == [.suspend])
        #expect(jobs.handle(.suspendSignal).isEmpty)
        #expect(jobs.handle(.suspendedLinePrinted).isEmpty)
        #expect(jobs.handle(.resumeSignal) == [.resume])
        #expect(jobs.handle(.resumeSignal).isEmpty)
        #expect(!jobs.isSuspended)
    }

    @Test func ctrlZSuspendsStopsOnceTheLineIsPrintedAndFgRereadsThenResumes() {
        var jobs = JobControl(rereadsOnContinue: true)
        #expect(jobs.handle(.stopSignal) == [.suspend, .awaitSuspendedLine(within: JobControl.lineWait, id: 1)])
        #expect(jobs.isSuspended && jobs.suspendedByStop)
        #expect(jobs.handle(.suspendedLinePrinted) == [.stopProcess])
        #expect(jobs.handle(.suspendedLineOverdue(id: 1)).isEmpty)
        #expect(jobs.handle(.continueSignal) == [.reread, .resume])
        #expect(!jobs.isSuspended && !jobs.suspendedByStop)
    }

    @Test func aSuspensionAskedForWithUsr1OutlastsAStopAndContinue() {
        var jobs = JobControl(rereadsOnContinue: true)
        #expect(jobs.handle(.suspendSignal) == [.suspend])
        #expect(jobs.handle(.suspendedLinePrinted).isEmpty)
        // Its line is out: Ctrl-Z stops at once.
        #expect(jobs.handle(.stopSignal) == [.stopProcess])
        #expect(jobs.handle(.continueSignal) == [.reread])
        #expect(jobs.isSuspended && !jobs.suspendedByStop)
        #expect(jobs.handle(.resumeSignal) == [.resume])
    }

    @Test func aSignalAfterCtrlZDecidesWhetherFgResumes() {
        var jobs = JobControl(rereadsOnContinue: false)
        #expect(jobs.handle(.stopSignal).first == .suspend)
        #expect(jobs.handle(.suspendedLinePrinted) == [.stopProcess])
        // SIGUSR1 while stopped (delivered first on fg): the suspension is its own now.
        #expect(jobs.handle(.suspendSignal).isEmpty)
        #expect(jobs.handle(.continueSignal).isEmpty)
        #expect(jobs.isSuspended)
    }

    @Test func aStopFromOutsideOnlyRereads() {
        var reread = JobControl(rereadsOnContinue: true)
        #expect(reread.handle(.continueSignal) == [.reread])
        var daemon = JobControl(rereadsOnContinue: false)
        #expect(daemon.handle(.continueSignal).isEmpty)
    }

    /// The daemon's own suspension of a process stopped from outside prints a `suspended` line
    /// that no Ctrl-Z asked for: the next Ctrl-Z still waits for the line of its own.
    @Test func aSuspendedLineNotAskedForDoesNotCount() {
        var jobs = JobControl(rereadsOnContinue: false)
        #expect(jobs.handle(.continueSignal).isEmpty)
        #expect(jobs.handle(.suspendedLinePrinted).isEmpty)
        #expect(jobs.handle(.stopSignal) == [.suspend, .awaitSuspendedLine(within: JobControl.lineWait, id: 1)])
        #expect(jobs.stopWaiting == 1)
        #expect(jobs.handle(.suspendedLinePrinted) == [.stopProcess])
        #expect(jobs.handle(.continueSignal) == [.resume])
        // Again, after a resume: a new wait.
        #expect(jobs.handle(.stopSignal) == [.suspend, .awaitSuspendedLine(within: JobControl.lineWait, id: 2)])
    }

    @Test func ctrlZRightAfterUsr1WaitsForThatSuspensionsLine() {
        var jobs = JobControl(rereadsOnContinue: false)
        #expect(jobs.handle(.suspendSignal) == [.suspend])
        #expect(jobs.handle(.stopSignal) == [.awaitSuspendedLine(within: JobControl.lineWait, id: 1)])
        #expect(!jobs.suspendedByStop)
        #expect(jobs.handle(.suspendedLinePrinted) == [.stopProcess])
        #expect(jobs.handle(.continueSignal).isEmpty)
        #expect(jobs.isSuspended)
    }

    @Test func withoutItsLineAStopWaitsOnlyUntilTheWaitIsOver() {
        var jobs = JobControl(rereadsOnContinue: false)
        #expect(jobs.handle(.stopSignal).last == .awaitSuspendedLine(within: JobControl.lineWait, id: 1))
        #expect(jobs.handle(.suspendedLineOverdue(id: 1)) == [.stopProcess])
        // A line that comes late is not taken for the next one.
        #expect(jobs.handle(.suspendedLinePrinted).isEmpty)
        #expect(jobs.handle(.continueSignal) == [.resume])
        #expect(jobs.handle(.stopSignal).last == .awaitSuspendedLine(within: JobControl.lineWait, id: 2))
        // The first wait's end, reported late, does not end the second.
        #expect(jobs.handle(.suspendedLineOverdue(id: 1)).isEmpty)
        #expect(jobs.handle(.suspendedLineOverdue(id: 2)) == [.stopProcess])
    }

    @Test func signalsDuringTheWaitForTheLineComeAfterTheStop() {
        var jobs = JobControl(rereadsOnContinue: true)
        _ = jobs.handle(.stopSignal)
        #expect(jobs.handle(.resumeSignal).isEmpty)
        #expect(jobs.handle(.stopSignal).isEmpty)
        #expect(jobs.handle(.terminateSignal).isEmpty)
        #expect(!jobs.isFinished)
        // The stop, then SIGUSR2, then Ctrl-Z again (a new suspension, a new wait), and the
        // termination still waits.
        #expect(jobs.handle(.suspendedLinePrinted) == [
            .stopProcess, .resume, .suspend, .awaitSuspendedLine(within: JobControl.lineWait, id: 2),
        ])
        #expect(jobs.handle(.suspendedLinePrinted) == [.stopProcess, .finish])
        #expect(jobs.isFinished)
    }

    @Test func terminationFinishesAndNothingFollows() {
        var jobs = JobControl(rereadsOnContinue: true)
        #expect(jobs.handle(.suspendSignal) == [.suspend])
        #expect(jobs.handle(.terminateSignal) == [.finish])
        #expect(jobs.handle(.resumeSignal).isEmpty)
        #expect(jobs.handle(.stopSignal).isEmpty)
        #expect(jobs.handle(.continueSignal).isEmpty)
    }

    @Test func signalsAreItsEvents() {
        #expect(JobControlDriver.signals.compactMap(JobControl.Event.init(signal:)) == [
            .suspendSignal, .resumeSignal, .stopSignal, .continueSignal, .terminateSignal, .terminateSignal,
        ])
        #expect(JobControl.Event(signal: 1) == nil)  // SIGHUP
    }
}
