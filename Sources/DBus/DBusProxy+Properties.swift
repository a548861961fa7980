extension DBusProxy {
    /// Reads every property again (`GetAll`, which activates an activatable peer), superseding
    /// a `GetAll` in flight; `done` is called once its answer was handled (or superseded, or
    /// the proxy closed). The answer is told to the property handlers (`loaded` or
    /// `loadFailed`).
    public func reloadProperties(then done: @escaping () -> Void = {}) {
        loadNumber &+= 1
        let number = loadNumber
        // Changes queued for the superseded load are older than this request: its answer covers them.
        load = PropertiesLoad(number: number, completions: (load?.completions ?? []) + [done])
        connection.getAllPropertiesReply(destination: destination, path: path, interface: interface, timeout: nil) {
            [weak self] result in
            guard let self, let load = self.load, load.number == number else { return }
            self.load = nil
            self.loadFinished(result, queued: load.queued)
            for completion in load.completions { completion() }
        }
    }

    /// Applies a `GetAll` answer, then the changes that arrived while it was outstanding (they
    /// were told when they arrived).
    ///
    /// Every queued change was received after the request was sent, so it is at least as new
    /// as the state the answer was taken from; a peer that answers with the state from before
    /// a change it signalled first (a threaded service) is then still right in the end.
    private func loadFinished(
        _ result: Result<(properties: [String: DBusValue], serial: UInt32), DBusError>, queued: [DBusPropertiesChange]
    ) {
        switch result {
        case .success(let reply):
            var properties = reply.properties
            for change in queued { Self.apply(change, to: &properties) }
            self.properties = properties
            tell(.loaded(properties))
        case .failure(let error):
            // The cache keeps what it had, with the queued changes applied when they arrived.
            if error.name != DBusError.Name.disconnected { tell(.loadFailed(error)) }
        }
    }

    func propertiesChanged(_ signal: DBusSignal) {
        guard isFromOwner(signal) else { return }
        let change: DBusPropertiesChange
        do throws(DBusError) {
            change = try DBusPropertiesChange(signal)
        } catch {
            tell(.malformedSignal(error))
            return
        }
        guard change.interface == interface else { return }
        if load != nil { load?.queued.append(change) }
        Self.apply(change, to: &properties)
        tell(.changed(change))
    }

    /// Whether `signal` comes from the destination's current owner, once known (a unique
    /// destination is its own owner).
    func isFromOwner(_ signal: DBusSignal) -> Bool {
        destination.isUnique ? signal.sender == destination : isOwnerKnown && signal.sender == owner
    }

    private static func apply(_ change: DBusPropertiesChange, to properties: inout [String: DBusValue]) {
        for (name, value) in change.changed { properties[name] = value }
        for name in change.invalidated { properties[name] = nil }
    }

    private func tell(_ event: PropertiesEvent) {
        for id in propertyHandlers.keys.sorted() { propertyHandlers[id]?(event) }
    }
}
