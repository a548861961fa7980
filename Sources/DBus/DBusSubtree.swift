/// One set of interface tables exported for every object under a prefix: sd-bus's fallback
/// vtable with its node enumerator.
///
/// Where a service has many objects of one kind (`/org/example/Job1/job/<n>`), it exports one
/// subtree instead of an object each: `resolve` says whether a path below `prefix` names an
/// object now, `enumerate` lists the objects there are (for `Introspect` of the prefix and of
/// the nodes above it), and the handlers, property values and `authorize` find their object
/// from the call's path. An exact-path `DBusObject` at a path below the prefix takes
/// precedence, and of two subtrees the one with the longer prefix.
///
/// ```swift
/// let jobs = DBusSubtree(
///     prefix: "/org/example/Job1/job", interfaces: [jobInterface],
///     resolve: { path in table.job(at: path) != nil },
///     enumerate: { table.paths },
///     authorize: { header in
///         table.job(at: header.path)?.owner == header.sender
///             ? nil : DBusError(name: DBusError.Name.accessDenied, message: "not yours")
///     })
/// try connection.export(jobs)
/// ```
///
/// Lives on the connection's loop thread, like everything it calls.
public final class DBusSubtree {
    /// The path every object of the subtree is below (the prefix itself is a node, not one of
    /// its objects).
    public let prefix: ObjectPath
    /// The interfaces each of its objects implements.
    public let interfaces: [DBusInterface]
    /// Whether `path` (below `prefix`) names one of its objects now.
    public var resolve: (ObjectPath) -> Bool
    /// The paths of its objects now (each below `prefix`; others are ignored).
    public var enumerate: () -> [ObjectPath]
    /// Decides from a call's header alone whether the caller may go on, as
    /// `DBusObject.authorize` does; `header.path` names the object.
    public var authorize: ((DBusCallHeader) -> DBusError?)?

    /// A subtree of objects below `prefix` implementing `interfaces`.
    public init(
        prefix: ObjectPath, interfaces: [DBusInterface], resolve: @escaping (ObjectPath) -> Bool,
        enumerate: @escaping () -> [ObjectPath], authorize: ((DBusCallHeader) -> DBusError?)? = nil
    ) {
        self.prefix = prefix
        self.interfaces = interfaces
        self.resolve = resolve
        self.enumerate = enumerate
        self.authorize = authorize
    }
}
