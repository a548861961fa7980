extension DBusConnection {
    /// Exports `object`: method calls to its path are dispatched to its interfaces' methods
    /// (after their signature is checked and `authorize` allowed them), and `Introspect`,
    /// `Properties.Get`, `GetAll` and `Set` are answered from its description. Objects stay
    /// exported across reconnections.
    /// - Throws: `DBusError` (`Failed`) when an object is exported at that path already.
    public func export(_ object: DBusObject) throws(DBusError) {
        guard objects[object.path] == nil else {
            throw DBusError(name: DBusError.Name.failed, message: "an object is exported at \(object.path) already")
        }
        objects[object.path] = object
    }

    /// Takes the object at `path` back; calls to it get `UnknownObject`.
    public func unexport(_ path: ObjectPath) {
        objects[path] = nil
    }

    /// Emits `PropertiesChanged` for `names` of `interface` of the object at `path`, with their
    /// current values (broadcast).
    /// - Throws: `DBusError` (`UnknownObject`, `UnknownProperty`) for what is not exported,
    ///   `Disconnected` when not connected.
    public func emitPropertiesChanged(path: ObjectPath, interface: InterfaceName, names: [String]) throws(DBusError) {
        guard let description = objects[path]?.interface(interface.rawValue) else {
            throw DBusError(name: DBusError.Name.unknownObject, message: "no interface \(interface) at \(path)")
        }
        var changed: [(String, DBusValue)] = []
        for name in names {
            guard let property = description.property(name) else {
                throw DBusError(name: DBusError.Name.unknownProperty, message: "no property \(name) on \(interface)")
            }
            changed.append((name, property.value()))
        }
        try emitSignal(
            path: path, interface: .properties, member: "PropertiesChanged",
            arguments: [.string(interface.rawValue), .vardict(changed), .strings([])])
    }

    /// Answers a method call to us; returns `false` for what libdbus answers itself (`Peer`).
    func dispatchCall(_ message: DBusMessage, generation: UInt64) -> Bool {
        guard let header = message.callHeader else { return false }
        if header.interface == .peer { return false }
        let arguments: [DBusValue]
        do {
            arguments = try message.arguments()
        } catch {
            if !message.expectsNoReply, let reply = message.makeError(error) { try? link?.send(reply) }
            return true
        }
        let call = DBusMethodCall(
            message: message, header: header, arguments: arguments, connection: self, generation: generation)
        dispatch(call)
        return true
    }

    private func dispatch(_ call: DBusMethodCall) {
        let interface = call.interface
        if interface == .introspectable || (interface == nil && call.member == "Introspect") {
            introspect(call)
            return
        }
        guard let object = objects[call.path] else {
            call.fail(DBusError(name: DBusError.Name.unknownObject, message: "no object at \(call.path)"))
            return
        }
        if interface == .properties {
            if let denied = object.authorize?(call) { return call.fail(denied) }
            properties(call, object)
            return
        }
        let found: DBusMethod?
        if let interface {
            guard let description = object.interface(interface.rawValue) else {
                call.fail(DBusError(name: DBusError.Name.unknownInterface, message: "\(call.path) has no interface \(interface)"))
                return
            }
            found = description.method(call.member.rawValue)
        } else {
            found = object.interfaces.lazy.compactMap { $0.method(call.member.rawValue) }.first
        }
        guard let method = found else {
            call.fail(DBusError(name: DBusError.Name.unknownMethod, message: "no method \(call.member) at \(call.path)"))
            return
        }
        guard call.signature == method.argumentSignature else {
            call.fail(.invalidArgs("\(call.member) takes '\(method.argumentSignature)', not '\(call.signature)'"))
            return
        }
        if let denied = object.authorize?(call) { return call.fail(denied) }
        call.resultSignature = method.resultSignature
        method.handler(call)
    }

    // MARK: org.freedesktop.DBus.Properties

    private func properties(_ call: DBusMethodCall, _ object: DBusObject) {
        let expected: String
        switch call.member.rawValue {
        case "Get": expected = "ss"
        case "GetAll": expected = "s"
        case "Set": expected = "ssv"
        default:
            call.fail(DBusError(name: DBusError.Name.unknownMethod, message: "no method \(call.member) on \(InterfaceName.properties)"))
            return
        }
        guard call.signature == expected, let interfaceName = call.arguments[0].stringValue else {
            call.fail(.invalidArgs("\(call.member) takes '\(expected)', not '\(call.signature)'"))
            return
        }
        guard let interface = object.interface(interfaceName) else {
            call.fail(DBusError(name: DBusError.Name.unknownInterface, message: "\(call.path) has no interface '\(interfaceName)'"))
            return
        }
        if call.member.rawValue == "GetAll" {
            call.resultSignature = "a{sv}"
            call.reply([.vardict(interface.properties.map { ($0.name, $0.value()) })])
            return
        }
        let name = call.arguments[1].stringValue ?? ""
        guard let property = interface.property(name) else {
            call.fail(DBusError(name: DBusError.Name.unknownProperty, message: "\(interfaceName) has no property '\(name)'"))
            return
        }
        if call.member.rawValue == "Set" {
            call.fail(DBusError(name: DBusError.Name.propertyReadOnly, message: "\(interfaceName).\(name) is read-only"))
            return
        }
        call.resultSignature = "v"
        call.reply([.variant(property.value())])
    }

    // MARK: org.freedesktop.DBus.Introspectable

    private func introspect(_ call: DBusMethodCall) {
        guard call.member == "Introspect" else {
            call.fail(DBusError(name: DBusError.Name.unknownMethod, message: "no method \(call.member) on \(InterfaceName.introspectable)"))
            return
        }
        guard call.signature.isEmpty else {
            call.fail(.invalidArgs("Introspect takes no arguments, not '\(call.signature)'"))
            return
        }
        let children = childNodes(of: call.path)
        let object = objects[call.path]
        guard object != nil || !children.isEmpty || call.path == "/" else {
            call.fail(DBusError(name: DBusError.Name.unknownObject, message: "no object at \(call.path)"))
            return
        }
        call.resultSignature = "s"
        call.reply([.string(DBusIntrospection.xml(interfaces: object?.interfaces, children: children))])
    }

    /// The names of the nodes directly below `path` that lead to exported objects.
    private func childNodes(of path: ObjectPath) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        for exported in objects.keys where exported.rawValue.hasPrefix(prefix) && exported != path {
            let rest = exported.rawValue.dropFirst(prefix.count)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }
}
