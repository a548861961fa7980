/// Cuts the bytes read from sway's IPC socket into messages, whatever the pieces they arrive in.
///
/// It holds at most one incomplete message (and what the last read brought with it): a header
/// announcing a payload over `limit` is refused before any of that payload is kept, and so is a
/// header without sway's magic, as soon as its first six bytes are there.
struct SwayIPCFrameReader {
    /// The largest payload accepted.
    let limit: Int
    private var buffer: [UInt8] = []
    /// Where the next message starts in `buffer`.
    private var start = 0

    /// A reader accepting payloads of up to `limit` bytes.
    init(limit: Int) {
        self.limit = limit
    }

    /// How many bytes wait for the rest of their message.
    var pendingByteCount: Int { buffer.count - start }

    /// Adds bytes read from the socket.
    mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message; `nil` when none is complete yet.
    /// - Throws: `SwayIPCError.badMagic` or `.messageTooLarge`; the reader is then of no further use.
    mutating func next() throws(SwayIPCError) -> SwayIPCMessage? {
        let available = buffer.count - start
        let magicCount = min(available, SwayIPCMessage.magic.count)
        guard buffer[start..<(start + magicCount)].elementsEqual(SwayIPCMessage.magic.prefix(magicCount)) else {
            throw .badMagic
        }
        guard available >= SwayIPCMessage.headerSize else { return nil }
        let length = littleEndian(at: start + 6)
        let type = littleEndian(at: start + 10)
        guard length <= limit else { throw .messageTooLarge(length: length, limit: limit) }
        let end = start + SwayIPCMessage.headerSize + Int(length)
        guard buffer.count >= end else { return nil }
        let message = SwayIPCMessage(type: type, payload: Array(buffer[(start + SwayIPCMessage.headerSize)..<end]))
        start = end
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 16)
            start = 0
        }
        return message
    }

    private func littleEndian(at index: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, offset in value | UInt32(buffer[index + offset]) << UInt32(offset * 8) }
    }
}
