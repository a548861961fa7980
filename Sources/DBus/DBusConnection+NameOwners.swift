import EpollLoop

extension DBusConnection {
    /// What is known about a name's owner.
    enum Owner: Equatable {
        case unknown
        case known(BusName?)
    }

    /// One tracked well-known name: its owner, its handlers, and the subscriptions that use it.
    final class NameWatch {
        let name: BusName
        var owner: Owner = .unknown
        var handlers: [UInt64: (BusName?) -> Void] = [:]
        /// The handlers that want to hear the owner leave too.
        var departureFollowers: Set<UInt64> = []
        /// Subscriptions whose sender is this name.
        var subscriptionUsers = 0
        /// The rule sent to the bus for it, while connected.
        var installedRule: DBusMatchRule?
        init(name: BusName) { self.name = name }
        var isUnused: Bool { handlers.isEmpty && subscriptionUsers == 0 }
        /// `NameOwnerChanged` of the name; only those where it had no owner before (`arg1=''`: an
        /// owner arriving) when no handler follows departures: signals are accepted from the
        /// current owner only, and an owner that left sends none, so its leaving needs no wake-up.
        var rule: DBusMatchRule {
            DBusMatchRule(
                sender: .bus, path: .bus, interface: .bus, member: DBusConnection.nameOwnerChanged,
                arguments: departureFollowers.isEmpty ? [0: name.rawValue, 1: ""] : [0: name.rawValue])
        }
    }

    /// Tracks the owner of the well-known `name`: `handler` gets the owner's unique name, or
    /// `nil` when the name has none, once it is known (after connecting, and after every
    /// reconnection) and at every change (`NameOwnerChanged`), until `cancel(_:)`. This is the
    /// one way to follow a name's owner; `DBusClient.nameOwners(of:)` is its stream form.
    ///
    /// With `followsDepartures` false, the owner leaving is not asked for (for a service that
    /// exits when idle and is activated again, whose leaving would wake the process for nothing):
    /// `handler` hears the first owner, every owner that arrives after none, and any change the
    /// connection sees anyway; an owner replaced by another without a gap is heard when a handler
    /// of the same name follows departures.
    @discardableResult
    public func nameOwners(of name: BusName, followsDepartures: Bool = true, handler: @escaping (BusName?) -> Void) -> Token {
        let id = makeID()
        let (watch, isNew) = nameWatch(name)
        watch.handlers[id] = handler
        watchTokens[id] = name
        if followsDepartures {
            watch.departureFollowers.insert(id)
            if !isNew { updateRule(of: watch) }
        }
        if isNew, isConnected, let link {
            start(watch, on: link)
        } else if case .known(let owner) = watch.owner {
            context.runSoon { [weak watch] in
                guard let watch, let handler = watch.handlers[id], watch.owner == .known(owner) else { return }
                handler(owner)
            }
        }
        return Token(id: id)
    }

    /// The owner of `name` as last seen: `.some(nil)` for no owner, `nil` when not known (yet).
    public func knownOwner(of name: BusName) -> BusName?? {
        guard case .known(let owner) = nameWatches[name]?.owner else { return nil }
        return .some(owner)
    }

    func nameWatch(_ name: BusName) -> (NameWatch, Bool) {
        if let watch = nameWatches[name] { return (watch, false) }
        let watch = NameWatch(name: name)
        nameWatches[name] = watch
        return (watch, true)
    }

    /// Adds the watch's `NameOwnerChanged` rule and asks for the current owner.
    func start(_ watch: NameWatch, on link: DBusLink) {
        watch.installedRule = watch.rule
        addMatch(watch.rule)
        let current = generation
        call(
            destination: .bus, path: .bus, interface: .bus, member: "GetNameOwner", arguments: [.string(watch.name.rawValue)]
        ) { [weak self, weak watch] result in
            guard let self, let watch, self.generation == current, self.nameWatches[watch.name] === watch else { return }
            switch result {
            case .success(let values):
                self.setOwner(values.first?.stringValue.flatMap { BusName(rawValue: $0) }, of: watch)
            case .failure(let error) where error.name == DBusError.Name.nameHasNoOwner:
                self.setOwner(nil, of: watch)
            case .failure:
                break  // disconnected: tried again after reconnecting
            }
        }
    }

    func setOwner(_ owner: BusName?, of watch: NameWatch) {
        guard watch.owner != .known(owner) else { return }
        watch.owner = .known(owner)
        for id in watch.handlers.keys.sorted() {
            guard watch.owner == .known(owner) else { return }
            watch.handlers[id]?(owner)
        }
    }

    func retireIfUnused(_ watch: NameWatch) {
        guard watch.isUnused, nameWatches[watch.name] === watch else {
            updateRule(of: watch)
            return
        }
        nameWatches[watch.name] = nil
        if isConnected, let rule = watch.installedRule { link?.removeMatch(rule) }
        watch.installedRule = nil
    }

    /// Sends the watch's rule again when whether its handlers follow departures changed.
    func updateRule(of watch: NameWatch) {
        guard isConnected, let installed = watch.installedRule, installed != watch.rule else { return }
        watch.installedRule = watch.rule
        addMatch(watch.rule)
        link?.removeMatch(installed)
    }
}
