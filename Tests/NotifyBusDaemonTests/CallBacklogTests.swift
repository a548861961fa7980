import Testing

@testable import NotifyBusDaemon

/// `CallBacklog`: heavy calls wait in order, are carried out in slices, and never hold more than
/// their bound.
struct CallBacklogTests {
    @Test func callsWaitInOrderAndOneSliceIsScheduledAtATime() {
        var backlog = CallBacklog<Int>(bounds: .init(bytes: 100, slice: .milliseconds(2)))
        #expect(kinds(backlog.arrived(1, bytes: 10)) == ["schedule"])
        #expect(kinds(backlog.arrived(2, bytes: 10)).isEmpty)
        #expect(backlog.count == 2 && backlog.bytes == 20)
        #expect(backlog.next(after: .zero) == 1)
        #expect(backlog.next(after: .milliseconds(1)) == 2)
        #expect(backlog.next(after: .milliseconds(1)) == nil)
        let again = backlog.sliceEnded()
        #expect(!again)
        #expect(kinds(backlog.arrived(3, bytes: 10)) == ["schedule"])
    }

    @Test func aSliceEndsAfterItsTimeAndTheRestWaitsForTheNext() {
        var backlog = CallBacklog<Int>(bounds: .init(bytes: 100, slice: .milliseconds(2)))
        for number in 1...3 { _ = backlog.arrived(number, bytes: 1) }
        #expect(backlog.next(after: .zero) == 1)
        #expect(backlog.next(after: .milliseconds(2)) == nil)
        let another = backlog.sliceEnded()
        #expect(another)
        #expect(backlog.next(after: .zero) == 2)
        #expect(backlog.next(after: .zero) == 3)
        let more = backlog.sliceEnded()
        #expect(!more)
        #expect(backlog.bytes == 0)
    }

    @Test func pastItsBoundTheOldestAreCarriedOutAtOnce() {
        var backlog = CallBacklog<Int>(bounds: .init(bytes: 25, slice: .milliseconds(2)))
        _ = backlog.arrived(1, bytes: 10)
        _ = backlog.arrived(2, bytes: 10)
        #expect(ran(backlog.arrived(3, bytes: 10)) == [1])
        #expect(backlog.bytes == 20)
        #expect(ran(backlog.arrived(4, bytes: 30)) == [2, 3])
        #expect(backlog.count == 1 && backlog.bytes == 30)
        #expect(backlog.takeAll() == [4])
        #expect(backlog.count == 0 && backlog.bytes == 0)
    }

    private func kinds(_ actions: [CallBacklog<Int>.Action]) -> [String] {
        actions.map { if case .run(let number) = $0 { "run \(number)" } else { "schedule" } }
    }

    private func ran(_ actions: [CallBacklog<Int>.Action]) -> [Int] {
        actions.compactMap { if case .run(let number) = $0 { number } else { nil } }
    }
}
