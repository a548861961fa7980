/// The server side's tables (`DBusObject`s at exact paths, `DBusSubtree`s under prefixes) and
/// the decision each method call gets: sd-bus's object and fallback vtables.
///
/// Everything is decided from the call's header before its body is read, in this order:
/// 1. `org.freedesktop.DBus.Peer` is not handled here (libdbus answers it);
/// 2. no object at the path (nor, for `Introspect`, a node on the way to objects) →
///    `UnknownObject`;
/// 3. the object's `authorize` refuses the caller → its error, whatever the member, interface
///    or signature (`Properties` and unknown members included); only `Introspectable` (and
///    `Peer`) are open to every caller;
/// 4. no such interface → `UnknownInterface`; no such member → `UnknownMethod`;
/// 5. a body larger than `Limits.maximumBodySize` → `Limits.limitsExceeded`, unread;
/// 6. a signature other than the method's → `InvalidArgs`;
/// 7. the method's `precheck`, on element counts;
/// 8. the arguments are decoded within the method's budget (past it → `Limits.limitsExceeded`)
///    and the handler is to run.
///
/// `Introspect` and `Get`, `GetAll` and `Set` of `org.freedesktop.DBus.Properties` follow the
/// same steps and are answered from the tables. `DBusConnection` keeps one and carries out its
/// decisions; a test or a fuzzer can drive one without a bus (`decide(_:body:)`).
public struct DBusDispatcher {
    /// What a call's body is held to.
    public struct Limits: Sendable, Hashable {
        /// The largest body, in bytes as marshalled, a call may have.
        public var maximumBodySize: Int
        /// The error a call past a limit gets (its body's size, its arguments' budget).
        public var limitsExceeded: ErrorName

        /// Limits of `maximumBodySize` bytes (128 KiB unless given), refused with
        /// `limitsExceeded` (`org.freedesktop.DBus.Error.LimitsExceeded` unless given).
        public init(maximumBodySize: Int = 128 * 1024, limitsExceeded: ErrorName = .limitsExceeded) {
            self.maximumBodySize = maximumBodySize
            self.limitsExceeded = limitsExceeded
        }
    }

    /// What to do with a method call.
    public enum Decision {
        /// Not for the tables: libdbus answers it (`org.freedesktop.DBus.Peer`).
        case notHandled
        /// Answer with this error; nothing else happens.
        case error(DBusError)
        /// Answer with these values, made from the tables (`Introspect`, `Properties.Get`, `GetAll`).
        case reply([DBusValue])
        /// Run `method`'s handler with `arguments`, which have its signature and were decoded
        /// within its budget; `interface` is the one it was found in.
        case invoke(DBusMethod, interface: InterfaceName, arguments: [DBusValue])
    }

    /// An object a call can reach: its interfaces and who may call it.
    struct Target {
        let interfaces: [DBusInterface]
        let authorize: ((DBusCallHeader) -> DBusError?)?

        func interface(_ name: String) -> DBusInterface? {
            interfaces.first { $0.name.rawValue == name }
        }
    }

    /// What bodies are held to.
    public var limits: Limits
    /// The objects exported at exact paths.
    public private(set) var objects: [ObjectPath: DBusObject] = [:]
    /// The subtrees exported, by prefix.
    public private(set) var subtrees: [ObjectPath: DBusSubtree] = [:]

    /// Empty tables with `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The budget of a method that declares none, and of the standard interfaces' methods.
    public var defaultBudget: DBusDecodingBudget { DBusDecodingBudget(bodyLimit: limits.maximumBodySize) }

    /// Adds `object` at its path.
    /// - Throws: `DBusError` (`Failed`) when an object is at that path already.
    public mutating func add(_ object: DBusObject) throws(DBusError) {
        guard objects[object.path] == nil else {
            throw DBusError(name: DBusError.Name.failed, message: "an object is exported at \(object.path) already")
        }
        objects[object.path] = object
    }

    /// Adds `subtree` at its prefix.
    /// - Throws: `DBusError` (`Failed`) when a subtree has that prefix already.
    public mutating func add(_ subtree: DBusSubtree) throws(DBusError) {
        guard subtrees[subtree.prefix] == nil else {
            throw DBusError(name: DBusError.Name.failed, message: "a subtree is exported at \(subtree.prefix) already")
        }
        subtrees[subtree.prefix] = subtree
    }

    /// Takes the object at `path` away; returns it.
    @discardableResult
    public mutating func removeObject(at path: ObjectPath) -> DBusObject? {
        objects.removeValue(forKey: path)
    }

    /// Takes the subtree at `prefix` away; returns it.
    @discardableResult
    public mutating func removeSubtree(at prefix: ObjectPath) -> DBusSubtree? {
        subtrees.removeValue(forKey: prefix)
    }

    /// The object at `path`: the one exported there, else the one a subtree resolves there
    /// (the subtree with the longest prefix above `path` first).
    func target(at path: ObjectPath) -> Target? {
        if let object = objects[path] { return Target(interfaces: object.interfaces, authorize: object.authorize) }
        guard !subtrees.isEmpty, path.rawValue != "/" else { return nil }
        var above = path.rawValue[...]
        while let slash = above.lastIndex(of: "/") {
            above = above[..<slash]
            let prefix = ObjectPath(unchecked: above.isEmpty ? "/" : String(above))
            if let subtree = subtrees[prefix], subtree.resolve(path) {
                return Target(interfaces: subtree.interfaces, authorize: subtree.authorize)
            }
        }
        return nil
    }

    // MARK: Deciding

    /// What to do with the call whose header is `header`; `body` is read only once the header
    /// has passed every check (see the type's steps).
    public func decide(_ header: DBusCallHeader, body: some DBusCallBody) -> Decision {
        if header.interface == .peer { return .notHandled }
        let target = target(at: header.path)
        if header.interface == .introspectable || (header.interface == nil && header.member == Self.introspect) {
            return introspect(header, target, body)
        }
        guard let target else {
            return .error(DBusError(name: DBusError.Name.unknownObject, message: "no object at \(header.path)"))
        }
        if let denied = target.authorize?(header) { return .error(denied) }
        if header.interface == .properties { return properties(header, target, body) }
        let found: (method: DBusMethod, interface: InterfaceName)?
        if let interface = header.interface {
            guard let table = target.interface(interface.rawValue) else {
                return .error(DBusError(
                    name: DBusError.Name.unknownInterface, message: "\(header.path) has no interface \(interface)"))
            }
            found = table.method(header.member.rawValue).map { ($0, interface) }
        } else {
            found = target.interfaces.lazy.compactMap { table in table.method(header.member.rawValue).map { ($0, table.name) } }
                .first
            if found == nil, Self.propertiesMembers.contains(header.member) { return properties(header, target, body) }
        }
        guard let (method, interface) = found else {
            return .error(DBusError(name: DBusError.Name.unknownMethod, message: "no method \(header.member) at \(header.path)"))
        }
        if let refused = check(header, body, expected: method.argumentSignature) { return .error(refused) }
        if let refused = method.precheck?(DBusArgumentPreview(body)) { return .error(refused) }
        do {
            let arguments = try body.arguments(within: method.budget ?? defaultBudget, limitsExceeded: limits.limitsExceeded)
            return .invoke(method, interface: interface, arguments: arguments)
        } catch {
            return .error(error)
        }
    }

    /// Refuses a body past the size limit (unread), then a signature other than `expected`.
    func check(_ header: DBusCallHeader, _ body: some DBusCallBody, expected: String) -> DBusError? {
        let size = body.bodySize
        guard size <= limits.maximumBodySize else {
            return DBusError(
                name: limits.limitsExceeded.rawValue,
                message: "the body of \(header.member) is \(size) bytes, more than the \(limits.maximumBodySize) accepted")
        }
        guard header.signature == expected else {
            return .invalidArgs("\(header.member) takes '\(expected)', not '\(header.signature)'")
        }
        return nil
    }

    static let introspect: MemberName = "Introspect"
    static let propertiesMembers: Set<MemberName> = ["Get", "GetAll", "Set"]
}
