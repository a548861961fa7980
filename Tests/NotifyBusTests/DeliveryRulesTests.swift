import NotifyBus
import Testing

/// One test per rule of the specification's Delivery semantics, against the Swift API.
@Suite struct DeliveryRulesTests {
    let bus = NotificationBus(clock: .zero)

    @Test func activeSubscriberGetsEveryEventInOrderAtOnce() {
        let sub = bus.subscribe()
        bus.publish("orientation", "portrait", at: .s(1))
        bus.publish("battery/BAT0/state", "charging", at: .s(2))
        bus.publish("orientation", "landscape-left", at: .s(3))
        let events = sub.poll()
        #expect(events.compactMap(\.notification).map(Note.init) == [
            Note("orientation", "portrait"),
            Note("battery/BAT0/state", "charging"),
            Note("orientation", "landscape-left", previous: "portrait"),
        ])
        #expect(events.compactMap(\.notification).map(\.time) == [.s(1), .s(2), .s(3)])
        #expect(events.compactMap(\.notification).allSatisfy { $0.kind == .live })
    }

    @Test func onlyMatchingKeysAreDelivered() {
        let sub = bus.subscribe(["battery/*/state", "orientation"])
        bus.publish("battery/BAT0/state", "full")
        bus.publish("battery/BAT0/level", 0.5)
        bus.publish("orientation", "portrait")
        bus.publish("light", ["level": 10, "unit": "lux"])
        #expect(sub.pollNotes().map(\.key) == ["battery/BAT0/state", "orientation"])
    }

    @Test func suspendedSubscriberHoldsOneEntryPerKeyAndResumeFlushesOnePerKey() {
        let sub = bus.subscribe()
        sub.suspend(at: .s(1))
        bus.publish("orientation", "landscape-right", at: .s(2))
        bus.publish("orientation", "portrait", at: .s(3))
        bus.publish("battery/BAT0/state", "charging", at: .s(3))
        bus.publish("orientation", "landscape-left", at: .s(4))
        bus.publish("battery/BAT0/state", "charging", at: .s(5))
        #expect(sub.poll() == [.suspended(time: .s(1))])
        sub.resume(at: .s(10))
        let events = sub.poll()
        #expect(events.first == .resumed(time: .s(10), flushed: 2))
        let notes = events.compactMap(\.notification)
        // Order of each key's latest event: orientation (t 4) before battery (t 5).
        #expect(notes.map(Note.init) == [Note("orientation", "landscape-left", 3), Note("battery/BAT0/state", "charging", 2)])
        #expect(notes.allSatisfy { $0.time == .s(10) && $0.kind == .flushed })
        #expect(notes[0].firstEventTime == .s(2) && notes[0].lastEventTime == .s(4))
    }

    @Test func flushComesBeforeAnyLaterEvent() {
        let sub = bus.subscribe()
        sub.suspend()
        bus.publish("a", 1)
        sub.resume()
        bus.publish("a", 2)
        let events = sub.poll()
        #expect(events.count == 4)
        #expect(events[1] == .resumed(time: .zero, flushed: 1))
        #expect(events.dropFirst(2).compactMap(\.notification).map(Note.init) == [Note("a", 1), Note("a", 2, previous: 1)])
    }

    @Test func suspendingTwiceOrResumingAnActiveSubscriberChangesNothing() {
        let sub = bus.subscribe()
        sub.resume()
        sub.suspend()
        sub.suspend()
        bus.publish("a", 1)
        sub.resume()
        sub.resume()
        #expect(sub.poll() == [
            .suspended(time: .zero), .resumed(time: .zero, flushed: 1),
            .notification(BusNotification(key: "a", value: 1, previous: nil, coalesced: 1, firstEventTime: .zero, lastEventTime: .zero, time: .zero, kind: .flushed)),
        ])
    }

    @Test func resumeWithNothingHeldFlushesZero() {
        let sub = bus.subscribe(["a"])
        sub.suspend()
        bus.publish("b", 1)
        sub.resume()
        #expect(sub.poll() == [.suspended(time: .zero), .resumed(time: .zero, flushed: 0)])
    }

    @Test func changedPolicySkipsValuesEqualToTheLastReceived() {
        let sub = bus.subscribe(policy: .changed)
        bus.publish("a", 1)
        bus.publish("a", 1.0)  // equal to 1 as JSON
        bus.publish("a", 2)
        sub.suspend()
        bus.publish("a", 3)
        bus.publish("a", 2)  // net zero: A→B→A
        bus.publish("b", "x")
        sub.resume()
        let events = sub.poll()
        #expect(events.compactMap(\.notification).map(Note.init) == [
            Note("a", 1), Note("a", 2, previous: 1), Note("b", "x", 1),
        ])
        #expect(events.contains(.resumed(time: .zero, flushed: 1)))
    }

    @Test func latestPolicyDeliversANetZeroChange() {
        let sub = bus.subscribe()
        bus.publish("a", 1)
        sub.suspend()
        bus.publish("a", 2)
        bus.publish("a", 1)
        sub.resume()
        #expect(sub.pollNotes() == [Note("a", 1), Note("a", 1, 2, previous: 1)])
    }

    @Test func allPolicyDeliversEveryHeldEventInOrder() {
        let sub = bus.subscribe(policy: .all)
        sub.suspend()
        bus.publish("a", 1)
        bus.publish("b", 1)
        bus.publish("a", 2)
        sub.resume()
        let events = sub.poll()
        #expect(events.contains(.resumed(time: .zero, flushed: 3)))
        #expect(events.compactMap(\.notification).map(Note.init) == [Note("a", 1), Note("b", 1), Note("a", 2, previous: 1)])
    }

    @Test func dropPolicyDiscardsEventsWhileSuspended() {
        let sub = bus.subscribe(policy: .drop)
        sub.suspend()
        bus.publish("a", 1)
        sub.resume()
        bus.publish("a", 2)
        let events = sub.poll()
        #expect(events.contains(.resumed(time: .zero, flushed: 0)))
        #expect(events.compactMap(\.notification).map(Note.init) == [Note("a", 2)])
        #expect(bus.value(forKey: "a") == 2)
    }

    @Test func overLimitTheSubscriberResyncsWithEveryCurrentValue() {
        bus.publish("old", "kept", at: .s(0))
        let sub = bus.subscribe(limit: 2)
        sub.suspend(at: .s(1))
        bus.publish("a", 1, at: .s(2))
        bus.publish("b", 1, at: .s(3))
        bus.publish("a", 2, at: .s(4))  // still two keys
        bus.publish("c", 1, at: .s(5))  // a third: overflow
        bus.publish("b", 2, at: .s(6))
        sub.resume(at: .s(7))
        let events = sub.poll()
        #expect(Array(events.prefix(3)) == [.suspended(time: .s(1)), .resumed(time: .s(7), flushed: 4), .resync(time: .s(7), reason: .limit)])
        let notes = events.compactMap(\.notification)
        #expect(notes.map(Note.init) == [Note("old", "kept", 0), Note("a", 2, 0), Note("c", 1, 0), Note("b", 2, 0)])
        #expect(notes.allSatisfy { $0.kind == .resync && $0.time == .s(7) })
    }

    @Test func overLimitUnderAllCountsEvents() {
        let sub = bus.subscribe(policy: .all, limit: 2)
        sub.suspend()
        bus.publish("a", 1)
        bus.publish("a", 2)
        #expect(sub.poll() == [.suspended(time: .zero)])
        sub.resume()
        #expect(sub.poll().count == 3)  // within the limit: resumed and two notes
        sub.suspend()
        bus.publish("a", 3)
        bus.publish("a", 4)
        bus.publish("a", 5)
        sub.resume()
        let events = sub.poll()
        #expect(events.contains(.resync(time: .zero, reason: .limit)))
        #expect(events.compactMap(\.notification).map(Note.init) == [Note("a", 5, 0, previous: 2)])
    }

    @Test func resyncUnderChangedSkipsValuesAlreadyReceived() {
        let sub = bus.subscribe(policy: .changed, limit: 1)
        bus.publish("a", 1)
        bus.publish("b", 1)
        sub.suspend()
        bus.publish("a", 2)
        bus.publish("b", 3)
        bus.publish("b", 1)
        sub.resume()
        let events = sub.poll()
        #expect(events.contains(.resumed(time: .zero, flushed: 1)))
        #expect(events.compactMap(\.notification).map(Note.init).suffix(1) == [Note("a", 2, 0, previous: 1)])
    }

    @Test func initialCurrentDeliversKnownValuesFirst() {
        bus.publish("b", 1, at: .s(1))
        bus.publish("a", 1, at: .s(2))
        bus.publish("b", 2, at: .s(3))
        bus.publish("x", 0, at: .s(4))
        let sub = bus.subscribe(["a", "b"], initial: .current, at: .s(5))
        bus.publish("a", 3, at: .s(6))
        let notes = sub.poll().compactMap(\.notification)
        #expect(notes.map(Note.init) == [Note("a", 1, 0), Note("b", 2, 0), Note("a", 3, 1, previous: 1)])
        #expect(notes.map(\.time) == [.s(5), .s(5), .s(6)])
        #expect(notes[1].lastEventTime == .s(3))
    }

    @Test func previousIsTheLastValueReceivedInAnyWay() {
        bus.publish("a", 0)
        let sub = bus.subscribe(initial: .current)
        sub.suspend()
        bus.publish("a", 1)
        sub.resume()
        bus.publish("a", 2)
        #expect(sub.pollNotes().map(\.previous) == [nil, 0, 1])
    }

    @Test func subscribersAreIndependent() {
        let a = bus.subscribe()
        let b = bus.subscribe(policy: .drop)
        a.suspend()
        bus.publish("k", 1)
        bus.publish("k", 2)
        a.resume()
        #expect(a.pollNotes() == [Note("k", 2, 2)])
        #expect(b.pollNotes() == [Note("k", 1), Note("k", 2, previous: 1)])
    }

    @Test func cancelFreesWhatItHeldAndEndsDelivery() {
        let sub = bus.subscribe()
        sub.suspend()
        for i in 0..<100 { bus.publish("k/\(i)", .integer(Int64(i))) }
        sub.cancel()
        #expect(sub.isCancelled)
        #expect(sub.poll().isEmpty)
        bus.publish("k/1", 5)
        sub.resume()
        #expect(sub.poll().isEmpty)
    }

    @Test func slowActiveSubscriberCollapsesPastTheHighWaterMark() {
        let sub = bus.subscribe(highWaterMark: 10)
        var published: [String: Int] = [:]
        for i in 0..<1000 {
            let key = "k/\(i % 5)"
            bus.publish(key, .integer(Int64(i)))
            published[key, default: 0] += 1
        }
        let notes = sub.poll().compactMap(\.notification)
        #expect(notes.count <= 10 + 5)
        var counted: [String: Int] = [:]
        for n in notes { counted[n.key, default: 0] += n.coalesced }
        #expect(counted == published)
        #expect(notes.suffix(5).map(\.value) == [995, 996, 997, 998, 999])
        #expect(notes.suffix(5).allSatisfy { $0.kind == .collapsed })
    }

    @Test func aSlowSubscriberPastItsLimitResyncsWithoutAResume() {
        let sub = bus.subscribe(["k/*"], limit: 1, highWaterMark: 2)
        bus.publish("k/a", 1, at: .s(1))
        bus.publish("k/b", 1, at: .s(2))  // backlog at the mark: later events collapse
        bus.publish("k/a", 2, at: .s(3))
        bus.publish("k/b", 2, at: .s(4))  // a second key: past the limit
        bus.publish("other", 0, at: .s(5))
        let events = sub.poll()
        #expect(events.filter { if case .resumed = $0 { true } else { false } }.isEmpty)
        #expect(events.contains(.resync(time: .s(4), reason: .limit)))
        #expect(events.compactMap(\.notification).map(Note.init) == [
            Note("k/a", 1), Note("k/b", 1), Note("k/a", 2, 0, previous: 1), Note("k/b", 2, 0, previous: 1),
        ])
    }

    @Test func memoryOfASuspendedSubscriberIsFlatInEvents() {
        let sub = bus.subscribe(limit: 100)
        sub.suspend()
        for i in 0..<100_000 { bus.publish("k/\(i % 100)", .integer(Int64(i))) }
        sub.resume()
        let events = sub.poll().dropFirst()  // after `suspended`
        #expect(events.first == .resumed(time: .zero, flushed: 100))
        #expect(events.compactMap(\.notification).allSatisfy { $0.coalesced == 1000 })
    }

    @Test func keyHandlesPublishLikeKeys() {
        let sub = bus.subscribe(["a/*"])
        let handle = bus.handle(for: "a/b")
        bus.publish(handle, 1)
        bus.publish(handle, 2)
        let other = NotificationBus(clock: .zero)
        other.publish(handle, 3)  // a handle from another bus still publishes by key
        #expect(sub.pollNotes() == [Note("a/b", 1), Note("a/b", 2, previous: 1)])
        #expect(other.value(forKey: "a/b") == 3)
        #expect(handle.key == "a/b")
    }

    @Test func publishIfChangedPublishesOnlyDifferences() {
        let sub = bus.subscribe()
        #expect(bus.publishIfChanged("a", 1))
        #expect(!bus.publishIfChanged("a", 1))
        #expect(bus.publishIfChanged("a", 2))
        #expect(sub.pollNotes().count == 2)
        #expect(bus.snapshot().map(\.key) == ["a"])
    }
}
