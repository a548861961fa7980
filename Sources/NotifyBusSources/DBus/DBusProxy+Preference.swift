import DBus

extension [DBusProxy] {
    /// Of proxies for names in order of preference (power-profiles-daemon's new name, then its old
    /// one), the one whose values count: the first name with an owner, once every name before it
    /// is known to have none; `nil` while none is served or an earlier name's owner is not yet
    /// known.
    var preferredServed: DBusProxy? {
        for proxy in self {
            guard proxy.isOwnerKnown else { return nil }
            if proxy.owner != nil { return proxy }
        }
        return nil
    }

    /// Whether the owner of every name is known: with `preferredServed` `nil`, none is served.
    var ownersKnown: Bool { allSatisfy(\.isOwnerKnown) }
}

extension DBusProxy {
    /// The properties `event` gives a watcher that follows the one property `name` of this proxy
    /// (both power-profiles-daemon names serve one): every property once they are loaded, the
    /// changed ones when `name` is among them; `nil` for any other event. A change that only
    /// invalidates `name` has the properties read again (their answer comes as `loaded`).
    func properties(following name: String, in event: PropertiesEvent) -> [String: DBusValue]? {
        switch event {
        case .loaded(let properties):
            return properties
        case .changed(let change):
            if change.changed[name] != nil { return change.changed }
            if change.invalidated.contains(name) { reloadProperties() }
            return nil
        case .loadFailed, .malformedSignal:
            return nil
        }
    }
}
