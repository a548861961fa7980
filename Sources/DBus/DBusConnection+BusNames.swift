extension DBusConnection {
    /// How a `RequestName` ended.
    public enum NameRequestResult: Sendable, Hashable {
        /// We own the name now.
        case primaryOwner
        /// Another connection owns it (we did not queue for it).
        case exists
        /// We owned it already.
        case alreadyOwner
        /// We are queued for it (never asked for by `requestName(_:reply:)`, which does not queue).
        case inQueue
    }

    /// Asks the bus for the well-known `name`, without queueing (`RequestName` with
    /// `DBUS_NAME_FLAG_DO_NOT_QUEUE`), and calls `reply` on the loop thread.
    public func requestName(_ name: BusName, reply: @escaping (Result<NameRequestResult, DBusError>) -> Void) {
        call(
            destination: .bus, path: .bus, interface: .bus, member: "RequestName",
            arguments: [.string(name.rawValue), .uint32(4)]
        ) { result in
            reply(result.flatMap { values in
                switch values.first {
                case .uint32(1): .success(.primaryOwner)
                case .uint32(2): .success(.inQueue)
                case .uint32(3): .success(.exists)
                case .uint32(4): .success(.alreadyOwner)
                default: .failure(.invalidArgs("RequestName answered \(values)"))
                }
            })
        }
    }

    /// Asks the bus for the Unix process ID of the connection `name` (`GetConnectionUnixProcessID`)
    /// and calls `reply` on the loop thread.
    public func processID(of name: BusName, reply: @escaping (Result<UInt32, DBusError>) -> Void) {
        call(
            destination: .bus, path: .bus, interface: .bus, member: "GetConnectionUnixProcessID",
            arguments: [.string(name.rawValue)]
        ) { result in
            reply(result.flatMap { values in
                guard case .uint32(let pid) = values.first else {
                    return .failure(.invalidArgs("GetConnectionUnixProcessID answered \(values)"))
                }
                return .success(pid)
            })
        }
    }

    /// Asks the bus what it knows of the process behind the connection `name`
    /// (`GetConnectionCredentials`, an asynchronous call) and calls `reply` on the loop thread.
    /// A `ProcessFD` in the answer is noted (`DBusCredentials.hasProcessFD`), not taken.
    public func credentials(of name: BusName, reply: @escaping (Result<DBusCredentials, DBusError>) -> Void) {
        callForReply(
            destination: .bus, path: .bus, interface: .bus, member: "GetConnectionCredentials",
            arguments: [.string(name.rawValue)], timeout: nil
        ) { result in
            reply(result.flatMap { message in
                Result { () throws(DBusError) in
                    let (values, descriptorKeys) = try message.vardictSkippingDescriptors()
                    return DBusCredentials(
                        processID: values["ProcessID"]?.int64Value.flatMap { UInt32(exactly: $0) },
                        userID: values["UnixUserID"]?.int64Value.flatMap { UInt32(exactly: $0) },
                        hasProcessFD: descriptorKeys.contains("ProcessFD"))
                }
            })
        }
    }
}
