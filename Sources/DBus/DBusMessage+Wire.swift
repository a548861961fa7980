import CDBus

extension DBusMessage {
    /// Reads a message from its wire form: exactly one whole message, as `marshal()` writes it
    /// or as it travels on a connection (either byte order).
    ///
    /// Wraps `dbus_message_demarshal_bytes_needed` (the length the header announces must be the
    /// length given) and `dbus_message_demarshal`, which validates the header fields, the
    /// signature and every value in the body against the D-Bus specification. A message that
    /// says it carries Unix file descriptors cannot be read this way (none travel with the bytes).
    /// - Throws: `DBusError` (`InvalidArgs`, or the name libdbus gives) when the bytes are not
    ///   exactly one valid message; `NoMemory` when libdbus runs out of memory.
    public static func demarshal(_ bytes: some Collection<UInt8>) throws(DBusError) -> DBusMessage {
        let whole = Array(bytes)
        guard whole.count <= Int(Int32.max) else {
            throw .invalidArgs("\(whole.count) bytes are more than a D-Bus message can hold")
        }
        let made: Result<OpaquePointer, DBusError> = whole.withUnsafeBufferPointer { buffer in
            // libdbus never reads through a null pointer here, but it checks for one: give it
            // a valid address even for no bytes.
            let zero: CChar = 0
            return withUnsafePointer(to: zero) { empty in
                let start = buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) } ?? empty
                return demarshal(start, count: Int32(buffer.count))
            }
        }
        return DBusMessage(adopting: try made.get())
    }

    private static func demarshal(_ start: UnsafePointer<CChar>, count: Int32) -> Result<OpaquePointer, DBusError> {
        let needed = dbus_message_demarshal_bytes_needed(start, count)
        guard needed >= 0 else { return .failure(.invalidArgs("not a D-Bus message header")) }
        guard needed == count else {
            let problem = needed == 0 || needed > count ? "incomplete" : "followed by \(count - needed) more bytes"
            return .failure(.invalidArgs("the D-Bus message is \(problem) (\(count) bytes given)"))
        }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let made = dbus_message_demarshal(start, count, &error) else {
            let name = error.name.map { String(cString: $0) } ?? DBusError.Name.invalidArgs
            let message = error.message.map { String(cString: $0) } ?? "not a valid D-Bus message"
            return .failure(DBusError(name: name, message: message))
        }
        return .success(made)
    }

    /// The message's wire form, which `demarshal(_:)` reads back. Wraps `dbus_message_marshal`
    /// (which locks the message: it cannot be changed afterwards).
    /// - Throws: `DBusError` (`NoMemory`) when libdbus runs out of memory.
    public func marshal() throws(DBusError) -> [UInt8] {
        var data: UnsafeMutablePointer<CChar>? = nil
        var count: Int32 = 0
        guard dbus_message_marshal(pointer, &data, &count) != 0, let data else { throw .noMemory }
        defer { dbus_free(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(count)))
    }
}
