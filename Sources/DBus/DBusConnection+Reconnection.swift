import EpollLoop

extension DBusConnection {
    /// Opens a link and registers on the bus (`Hello`, asynchronous).
    func attemptConnection() {
        reconnectTimer = nil
        setState(.connecting)
        let resolved: String
        do {
            resolved = try address.resolve()
        } catch {
            // No address (the session bus's unset): no attempt would find one, so none is
            // scheduled (a wake-up for nothing); `connect()` reads the environment again.
            dropLink(error)
            setState(.disconnected(error))
            return
        }
        let link: DBusLink
        do {
            link = try DBusLink(
                address: resolved, context: context, maximumReceivedSize: configuration.maximumReceivedSize)
        } catch {
            connectionFailed(error)
            return
        }
        generation &+= 1
        let current = generation
        self.link = link
        link.onMessage = { [weak self] message in self?.received(message, generation: current) ?? false }
        let hello: DBusMessage
        do {
            hello = try DBusMessage.methodCall(destination: .bus, path: .bus, interface: .bus, member: "Hello")
        } catch {
            connectionFailed(error)
            return
        }
        send(hello, timeout: configuration.defaultTimeout) { [weak self] result in
            guard let self, self.generation == current, self.link != nil else { return }
            switch result {
            case .success(let reply):
                guard let text = (try? reply.arguments())?.first?.stringValue, let name = BusName(rawValue: text) else {
                    self.connectionFailed(DBusError(name: DBusError.Name.failed, message: "Hello returned no unique name"))
                    return
                }
                self.registered(as: name, link: link)
            case .failure(let error):
                self.connectionFailed(error)
            }
        }
    }

    /// Registered: sets every match rule and name watch up on the new link.
    private func registered(as name: BusName, link: DBusLink) {
        link.setUniqueName(name)
        backoff = configuration.initialBackoff
        for id in subscriptions.keys.sorted() { if let rule = subscriptions[id]?.rule { addMatch(rule) } }
        for watch in nameWatches.values { start(watch, on: link) }
        setState(.connected(uniqueName: name))
    }

    func connectionFailed(_ error: DBusError) {
        dropLink(error)
        setState(.disconnected(error))
        scheduleReconnect()
    }

    private func scheduleReconnect() {
        guard configuration.reconnects, state != .closed, reconnectTimer == nil else { return }
        let delay = backoff
        backoff = min(backoff * 2, configuration.maximumBackoff)
        reconnectTimer = context.scheduleTimer(after: delay) { [weak self] in
            guard let self else { return }
            self.reconnectTimer = nil
            if case .disconnected = self.state { self.attemptConnection() }
        }
    }

    /// Shuts the link down, fails outstanding calls, forgets owners.
    func dropLink(_ error: DBusError) {
        guard let link else { return }
        self.link = nil
        generation &+= 1
        let outstanding = calls
        calls = [:]
        for call in outstanding.values { call.pending.cancel() }
        link.shutDown()
        for watch in nameWatches.values { watch.owner = .unknown }
        for (_, call) in outstanding.sorted(by: { $0.key < $1.key }) { call.completion(.failure(error)) }
    }
}
