/// One message of sway's IPC (the i3 IPC): magic `i3-ipc`, the payload's length and the type
/// (little-endian 32-bit each), then the payload (JSON, or a command's text).
///
/// Replies carry the type of the request; events have the high bit of the type set.
struct SwayIPCMessage: Sendable, Hashable {
    /// `SUBSCRIBE`, with a JSON array of event names as payload.
    static let subscribe: UInt32 = 2
    /// `GET_TREE`, with an empty payload.
    static let getTree: UInt32 = 4
    /// The bit set in the type of every event.
    static let eventBit: UInt32 = 0x8000_0000
    /// The `workspace` event.
    static let workspaceEvent: UInt32 = 0x8000_0000
    /// The `window` event.
    static let windowEvent: UInt32 = 0x8000_0003
    /// The magic every message starts with.
    static let magic: [UInt8] = Array("i3-ipc".utf8)
    /// The size of the header: magic, length, type.
    static let headerSize = 14

    /// The type (a request's, or an event's with the high bit set).
    var type: UInt32
    /// The payload.
    var payload: [UInt8]

    /// A message of `type` with `payload`.
    init(type: UInt32, payload: [UInt8] = []) {
        self.type = type
        self.payload = payload
    }

    /// Whether it is an event (the type's high bit is set), not a reply.
    var isEvent: Bool { type & Self.eventBit != 0 }

    /// The message as it goes over the socket.
    var encoded: [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.headerSize + payload.count)
        Self.appendLittleEndian(UInt32(truncatingIfNeeded: payload.count), to: &bytes)
        Self.appendLittleEndian(type, to: &bytes)
        bytes += payload
        return bytes
    }

    private static func appendLittleEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
