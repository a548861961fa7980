import EpollLoop

extension DBusConnection {
    /// A handler and the rule that selects its signals.
    struct SignalSubscription {
        let rule: DBusMatchRule
        let handler: (DBusSignal) -> Void
    }

    private static let localPath: ObjectPath = "/org/freedesktop/DBus/Local"
    private static let localInterface: InterfaceName = "org.freedesktop.DBus.Local"
    private static let disconnectedMember: MemberName = "Disconnected"
    static let nameOwnerChanged: MemberName = "NameOwnerChanged"

    /// Calls `handler` on the loop thread for every signal that matches `rule`, broadcast or
    /// unicast to us, until `cancel(_:)`. This is the one way to add a match rule: the rule is
    /// sent to the bus now (when connected) and after every reconnection (by `DBusLink`,
    /// `dbus_bus_add_match`), and checked here against each signal's header before its
    /// arguments are decoded.
    @discardableResult
    public func signals(matching rule: DBusMatchRule, handler: @escaping (DBusSignal) -> Void) -> Token {
        let id = makeID()
        subscriptions[id] = SignalSubscription(rule: rule, handler: handler)
        if let name = rule.wellKnownSender {
            let (watch, isNew) = nameWatch(name)
            watch.subscriptionUsers += 1
            if isNew, isConnected, let link { start(watch, on: link) }
        }
        if isConnected { addMatch(rule) }
        return Token(id: id)
    }

    /// Dispatches a message from the link: a method call to the exported objects; a signal's
    /// header is checked against every rule first, and its arguments are decoded once, and only
    /// when a rule matched. Returns whether a method call was answered here.
    func received(_ message: DBusMessage, generation: UInt64) -> Bool {
        guard generation == self.generation else { return false }
        if message.kind == .methodCall { return dispatchCall(message, generation: generation) }
        guard message.kind == .signal, let header = message.signalHeader else { return false }
        if header.path == Self.localPath, header.interface == Self.localInterface, header.member == Self.disconnectedMember {
            // Leave libdbus's dispatch before tearing the connection down.
            context.runSoon { [weak self] in
                guard let self, self.generation == generation else { return }
                self.connectionFailed(.disconnected("the bus closed the connection"))
            }
            return false
        }
        var firstString: String?? = nil
        func arg0() -> String? {
            if let firstString { return firstString }
            let value = message.firstStringArgument
            firstString = .some(value)
            return value
        }
        var decoded: DBusSignal?
        func signal() -> DBusSignal? {
            if let decoded { return decoded }
            guard let arguments = try? message.arguments() else { return nil }
            decoded = DBusSignal(header: header, signature: message.signature, arguments: arguments)
            return decoded
        }
        if header.sender == .bus, header.interface == .bus, header.member == Self.nameOwnerChanged,
           let text = arg0(), let name = BusName(rawValue: text), let watch = nameWatches[name]
        {
            guard let arguments = signal()?.arguments else { return false }
            if arguments.count == 3, let newOwner = arguments[2].stringValue {
                setOwner(newOwner.isEmpty ? nil : BusName(rawValue: newOwner), of: watch)
            }
        }
        for id in subscriptions.keys.sorted() {
            guard generation == self.generation, let subscription = subscriptions[id] else { continue }
            guard matches(subscription.rule, header, argument: { $0 == 0 ? arg0() : message.stringArgument(at: $0) })
            else { continue }
            guard let signal = signal() else { return false }
            subscription.handler(signal)
        }
        return false
    }

    private func matches(_ rule: DBusMatchRule, _ header: DBusSignalHeader, argument: (Int) -> String?) -> Bool {
        if let path = rule.path, path != header.path { return false }
        if let interface = rule.interface, interface != header.interface { return false }
        if let member = rule.member, member != header.member { return false }
        if let name = rule.wellKnownSender {
            // Only the current owner, once known: the bus filters broadcasts by the name, but a
            // unicast signal to us reaches us from anyone.
            guard case .known(let owner?) = nameWatches[name]?.owner, owner == header.sender else { return false }
        } else if let sender = rule.sender, sender != header.sender {
            return false
        }
        for (index, expected) in rule.arguments where argument(index) != expected { return false }
        return true
    }
}
