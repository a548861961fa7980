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
