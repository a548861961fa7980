extension DBusConnection {
    /// The rule of `peersLeaving(_:)`: `NameOwnerChanged` from the bus whose new owner (`arg2`)
    /// is empty, a name losing its owner.
    public static let peersLeavingRule = DBusMatchRule(
        sender: .bus, path: .bus, interface: .bus, member: nameOwnerChanged, arguments: [2: ""])

    /// Calls `handler` on the loop thread with every match rule the bus refuses (`AddMatch`
    /// answered with an error, such as `LimitsExceeded` past the bus's rules per connection)
    /// and the error, until `cancel(_:)`. The signals of a refused rule that are broadcast do
    /// not reach us; unicast ones still do. Calls that fail because the bus went away are not
    /// reported: every rule is sent again after reconnecting.
    @discardableResult
    public func onMatchRuleFailure(_ handler: @escaping (DBusMatchRule, DBusError) -> Void) -> Token {
        let id = makeID()
        matchFailureHandlers[id] = handler
        return Token(id: id)
    }

    /// Calls `handler` on the loop thread with the unique name of every connection that leaves
    /// the bus, until `cancel(_:)`, through one match rule (`peersLeavingRule`) whatever the
    /// number of peers followed, where `nameOwners(of:handler:)` adds one rule per name.
    /// Well-known names losing their owner are not reported (only unique names, `arg0` `:1.42`).
    /// A peer that sent us a message and then left is reported after that message.
    @discardableResult
    public func peersLeaving(_ handler: @escaping (BusName) -> Void) -> Token {
        signals(matching: Self.peersLeavingRule) { signal in
            guard signal.arguments.count == 3, let text = signal.arguments[0].stringValue, text.hasPrefix(":"),
                  signal.arguments[2].stringValue == "", let name = BusName(rawValue: text)
            else { return }
            handler(name)
        }
    }

    /// Asks the bus to route signals matching `rule` to us: `AddMatch` as an asynchronous call
    /// (never a blocking one on the loop thread), whose refusal is told to the
    /// `onMatchRuleFailure(_:)` handlers.
    func addMatch(_ rule: DBusMatchRule) {
        call(destination: .bus, path: .bus, interface: .bus, member: "AddMatch", arguments: [.string(rule.text)]) {
            [weak self] result in
            guard let self, case .failure(let error) = result, error.name != DBusError.Name.disconnected else { return }
            for id in self.matchFailureHandlers.keys.sorted() { self.matchFailureHandlers[id]?(rule, error) }
        }
    }
}

extension DBusConnection {
    /// How many match rules the connection keeps on the bus: one per signal subscription, and
    /// one per followed name's owner.
    public var matchRuleCount: Int { subscriptions.count + nameWatches.count }
}
