extension DBusDispatcher {
    // MARK: org.freedesktop.DBus.Properties

    /// `Get`, `GetAll` and `Set`, answered from the target's tables; `Set` is refused (every
    /// property is read-only).
    func properties(_ header: DBusCallHeader, _ target: Target, _ body: some DBusCallBody) -> Decision {
        let expected: String
        switch header.member.rawValue {
        case "Get": expected = "ss"
        case "GetAll": expected = "s"
        case "Set": expected = "ssv"
        default:
            return .error(DBusError(
                name: DBusError.Name.unknownMethod, message: "no method \(header.member) on \(InterfaceName.properties)"))
        }
        if let refused = check(header, body, expected: expected) { return .error(refused) }
        let arguments: [DBusValue]
        do {
            arguments = try body.arguments(within: defaultBudget, limitsExceeded: limits.limitsExceeded)
        } catch {
            return .error(error)
        }
        let interfaceName = arguments.first?.stringValue ?? ""
        guard let interface = target.interface(interfaceName) else {
            return .error(DBusError(
                name: DBusError.Name.unknownInterface, message: "\(header.path) has no interface '\(interfaceName)'"))
        }
        if header.member.rawValue == "GetAll" {
            var values: [(String, DBusValue)] = []
            for property in interface.properties {
                switch value(of: property, at: header.path) {
                case .success(let value): values.append((property.name, value))
                case .failure(let error): return .error(error)
                }
            }
            return .reply([.vardict(values)])
        }
        let name = arguments.count > 1 ? arguments[1].stringValue ?? "" : ""
        guard let property = interface.property(name) else {
            return .error(DBusError(
                name: DBusError.Name.unknownProperty, message: "\(interfaceName) has no property '\(name)'"))
        }
        if header.member.rawValue == "Set" {
            return .error(DBusError(name: DBusError.Name.propertyReadOnly, message: "\(interfaceName).\(name) is read-only"))
        }
        switch value(of: property, at: header.path) {
        case .success(let value): return .reply([.variant(value)])
        case .failure(let error): return .error(error)
        }
    }

    /// The value of `property` on the object at `path`, when it has the property's type.
    private func value(of property: DBusProperty, at path: ObjectPath) -> Result<DBusValue, DBusError> {
        let value = property.value(path)
        guard value.hasSignature(property.signature) else {
            return .failure(DBusError(
                name: DBusError.Name.failed,
                message: "\(property.name) has a value of type '\(value.signature)', not '\(property.signature)'"))
        }
        return .success(value)
    }

    // MARK: org.freedesktop.DBus.Introspectable

    /// `Introspect` of an object or of a node on the way to objects (or `/`), open to everyone.
    func introspect(_ header: DBusCallHeader, _ target: Target?, _ body: some DBusCallBody) -> Decision {
        let children = childNodes(of: header.path)
        guard target != nil || !children.isEmpty || header.path.rawValue == "/" || subtrees[header.path] != nil else {
            return .error(DBusError(name: DBusError.Name.unknownObject, message: "no object at \(header.path)"))
        }
        guard header.member == Self.introspect else {
            return .error(DBusError(
                name: DBusError.Name.unknownMethod, message: "no method \(header.member) on \(InterfaceName.introspectable)"))
        }
        if let refused = check(header, body, expected: "") { return .error(refused) }
        return .reply([.string(DBusIntrospection.xml(interfaces: target?.interfaces, children: children))])
    }

    /// The names of the nodes directly below `path` that lead to objects: exported objects,
    /// subtrees' prefixes, and the objects a subtree at or above `path` lists.
    func childNodes(of path: ObjectPath) -> [String] {
        let base = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        func add(_ candidate: String) {
            guard candidate.utf8.count > base.utf8.count, candidate.hasPrefix(base) else { return }
            let rest = candidate.utf8.dropFirst(base.utf8.count)
            names.insert(String(decoding: rest.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self))
        }
        for exported in objects.keys { add(exported.rawValue) }
        for (prefix, subtree) in subtrees {
            add(prefix.rawValue)
            let below = prefix.rawValue == "/" ? "/" : prefix.rawValue + "/"
            guard path == prefix || path.rawValue.hasPrefix(below) else { continue }
            for node in subtree.enumerate() where node.rawValue.hasPrefix(below) { add(node.rawValue) }
        }
        return names.sorted()
    }
}
