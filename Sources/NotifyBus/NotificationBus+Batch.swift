extension NotificationBus {
    /// Publishes several events at one time: the clock is read once, and the bus applies them in
    /// order under one lock, so no other publish comes between them.
    ///
    /// Each event is as if published alone with `publish(_:_:at:)` at the same `time`; a source
    /// whose one change sets several keys (a uevent, a D-Bus signal) stamps them all alike.
    public func publish(_ batch: [(key: String, value: JSONValue)], at time: Duration? = nil) {
        guard !batch.isEmpty else { return }
        let time = time ?? clock.now()
        let wakes = withState { state in
            var wakes: [Wakeup] = []
            for (key, value) in batch {
                state.publish(keyID: state.keyID(for: key), value: value, time: time, wakes: &wakes)
            }
            return wakes
        }
        if !wakes.isEmpty { perform(wakes) }
    }

    /// Publishes several events through handles, at one time and under one lock (see `publish(_:at:)`).
    public func publish(_ batch: [(handle: KeyHandle, value: JSONValue)], at time: Duration? = nil) {
        guard !batch.isEmpty else { return }
        let time = time ?? clock.now()
        let bus = ObjectIdentifier(self)
        let wakes = withState { state in
            var wakes: [Wakeup] = []
            for (handle, value) in batch {
                let id = handle.bus == bus ? handle.id : state.keyID(for: handle.key)
                state.publish(keyID: id, value: value, time: time, wakes: &wakes)
            }
            return wakes
        }
        if !wakes.isEmpty { perform(wakes) }
    }

    /// Publishes, at one time and under one lock, each event whose value differs from the stored one
    /// (see `publishIfChanged(_:_:at:)`). A key given twice is compared with the value published
    /// before it in the same batch.
    /// - Returns: how many events were published.
    @discardableResult
    public func publishIfChanged(_ batch: [(key: String, value: JSONValue)], at time: Duration? = nil) -> Int {
        guard !batch.isEmpty else { return 0 }
        let time = time ?? clock.now()
        let (published, wakes) = withState { state -> (Int, [Wakeup]) in
            var wakes: [Wakeup] = []
            var published = 0
            for (key, value) in batch {
                let id = state.keyID(for: key)
                if state.keys[Int(id)].value == value { continue }
                state.publish(keyID: id, value: value, time: time, wakes: &wakes)
                published += 1
            }
            return (published, wakes)
        }
        if !wakes.isEmpty { perform(wakes) }
        return published
    }
}
