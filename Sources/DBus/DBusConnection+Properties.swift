extension DBusConnection {
    /// Reads one property (`org.freedesktop.DBus.Properties.Get`); `reply` gets its value with
    /// the variant unwrapped once (a portal's double-wrapped value keeps its inner variant).
    public func getProperty(
        destination: BusName, path: ObjectPath, interface: InterfaceName, name: String, timeout: Duration? = nil,
        reply: @escaping (Result<DBusValue, DBusError>) -> Void
    ) {
        call(
            destination: destination, path: path, interface: .properties, member: "Get",
            arguments: [.string(interface.rawValue), .string(name)], timeout: timeout
        ) { result in
            reply(result.flatMap { values in
                guard values.count == 1, case .variant(let value) = values[0] else {
                    return .failure(.invalidArgs("Get(\(interface).\(name)) returned '\(values.map(\.signature).joined())', expected 'v'"))
                }
                return .success(value)
            })
        }
    }

    /// Reads every property of `interface` (`org.freedesktop.DBus.Properties.GetAll`); `reply`
    /// gets them by name, each variant unwrapped once.
    public func getAllProperties(
        destination: BusName, path: ObjectPath, interface: InterfaceName, timeout: Duration? = nil,
        reply: @escaping (Result<[String: DBusValue], DBusError>) -> Void
    ) {
        getAllPropertiesReply(destination: destination, path: path, interface: interface, timeout: timeout) { result in
            reply(result.map(\.properties))
        }
    }

    /// `GetAll`, with the reply's serial number (`DBusProxy` orders it against signals).
    func getAllPropertiesReply(
        destination: BusName, path: ObjectPath, interface: InterfaceName, timeout: Duration?,
        reply: @escaping (Result<(properties: [String: DBusValue], serial: UInt32), DBusError>) -> Void
    ) {
        callForReply(
            destination: destination, path: path, interface: .properties, member: "GetAll",
            arguments: [.string(interface.rawValue)], timeout: timeout
        ) { result in
            reply(result.flatMap { message in
                let values: [DBusValue]
                do throws(DBusError) { values = try message.arguments() } catch { return .failure(error) }
                guard values.count == 1, case .dictionary("s", "v", let entries) = values[0] else {
                    return .failure(.invalidArgs("GetAll(\(interface)) returned '\(values.map(\.signature).joined())', expected 'a{sv}'"))
                }
                var properties: [String: DBusValue] = [:]
                for entry in entries {
                    if case .string(let name) = entry.key, case .variant(let value) = entry.value { properties[name] = value }
                }
                return .success((properties, message.serial))
            })
        }
    }

    /// Writes one property (`org.freedesktop.DBus.Properties.Set`).
    public func setProperty(
        destination: BusName, path: ObjectPath, interface: InterfaceName, name: String, value: DBusValue,
        timeout: Duration? = nil, reply: @escaping (Result<Void, DBusError>) -> Void
    ) {
        call(
            destination: destination, path: path, interface: .properties, member: "Set",
            arguments: [.string(interface.rawValue), .string(name), .variant(value)], timeout: timeout
        ) { result in reply(result.map { _ in () }) }
    }

    /// `signals(matching: .propertiesChanged(sender:path:interface:))`, decoded: calls
    /// `handler` for every `PropertiesChanged` of `interface` on `path` from `sender` (a
    /// well-known name is followed across owners), broadcast or unicast to us. A signal whose
    /// arguments are not `(s, a{sv}, as)` is passed on as a failure, so the caller can report it.
    @discardableResult
    public func propertiesChanges(
        sender: BusName?, path: ObjectPath, interface: InterfaceName,
        handler: @escaping (Result<DBusPropertiesChange, DBusError>) -> Void
    ) -> Token {
        signals(matching: .propertiesChanged(sender: sender, path: path, interface: interface)) { signal in
            handler(Result { () throws(DBusError) in try DBusPropertiesChange(signal) })
        }
    }
}
