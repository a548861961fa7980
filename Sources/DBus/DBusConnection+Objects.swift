extension DBusConnection {
    /// Exports `object`: method calls to its path are dispatched to its interfaces' methods
    /// (`DBusDispatcher`'s steps: the object, its `authorize`, the member, the body's size, the
    /// signature, then the arguments decoded within the method's budget), and `Introspect`,
    /// `Properties.Get`, `GetAll` and `Set` are answered from its description. Objects stay
    /// exported across reconnections.
    /// - Throws: `DBusError` (`Failed`) when an object is exported at that path already.
    public func export(_ object: DBusObject) throws(DBusError) {
        try dispatcher.add(object)
    }

    /// Exports `subtree`: one set of interface tables for every object below its prefix that
    /// its resolver names, dispatched as an exported object's calls are.
    /// - Throws: `DBusError` (`Failed`) when a subtree is exported at that prefix already.
    public func export(_ subtree: DBusSubtree) throws(DBusError) {
        try dispatcher.add(subtree)
    }

    /// Takes the object at `path` back; calls to it get `UnknownObject`.
    public func unexport(_ path: ObjectPath) {
        dispatcher.removeObject(at: path)
    }

    /// Takes the subtree at `prefix` back; calls to its objects get `UnknownObject`.
    public func unexportSubtree(at prefix: ObjectPath) {
        dispatcher.removeSubtree(at: prefix)
    }

    /// Emits `PropertiesChanged` for `names` of `interface` of the object at `path` (exported
    /// there, or resolved by a subtree), with their current values (broadcast).
    /// - Throws: `DBusError` (`UnknownObject`, `UnknownProperty`) for what is not exported,
    ///   `Disconnected` when not connected.
    public func emitPropertiesChanged(path: ObjectPath, interface: InterfaceName, names: [String]) throws(DBusError) {
        guard let description = dispatcher.target(at: path)?.interface(interface.rawValue) else {
            throw DBusError(name: DBusError.Name.unknownObject, message: "no interface \(interface) at \(path)")
        }
        var changed: [(String, DBusValue)] = []
        for name in names {
            guard let property = description.property(name) else {
                throw DBusError(name: DBusError.Name.unknownProperty, message: "no property \(name) on \(interface)")
            }
            changed.append((name, property.value(path)))
        }
        try emitSignal(
            path: path, interface: .properties, member: "PropertiesChanged",
            arguments: [.string(interface.rawValue), .vardict(changed), .strings([])])
    }

    /// Answers a method call to us from the dispatcher's decision (a call that expects no reply
    /// is dispatched the same and never answered); returns `false` for what libdbus answers
    /// itself (`Peer`).
    func dispatchCall(_ message: DBusMessage, generation: UInt64) -> Bool {
        guard let header = message.callHeader else { return false }
        // A copy: what the decision calls (authorization, resolvers, property values) may
        // export or unexport.
        let dispatcher = self.dispatcher
        let address = message.replyAddress
        switch dispatcher.decide(header, body: message) {
        case .notHandled:
            return false
        case .error(let error):
            answer(address, with: .failure(error), generation: generation)
        case .reply(let values):
            answer(address, with: .success(values), generation: generation)
        case .invoke(let method, let interface, let arguments):
            // The call keeps where its answer goes, not its message: a handler that answers
            // later (after asking the bus something) must not hold what libdbus counts against
            // the bytes it reads ahead, or the answer it waits for would never be read.
            let call = DBusMethodCall(
                header: header, interface: interface, arguments: arguments, resultSignature: method.resultSignature
            ) { [weak self] result in self?.answer(address, with: result, generation: generation) }
            method.handler(call)
        }
        return true
    }

    /// Sends the answer to the call at `address` on the link it came in on (not a newer one,
    /// where the caller is gone), unless the caller expects none.
    private func answer(_ address: DBusReplyAddress, with result: Result<[DBusValue], DBusError>, generation: UInt64) {
        guard !address.expectsNoReply, self.generation == generation, let link,
              let made = DBusMessage.answer(to: address, result)
        else { return }
        try? link.send(made)
    }
}
