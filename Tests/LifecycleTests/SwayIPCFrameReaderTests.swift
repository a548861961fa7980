@testable import NotifyBusLifecycle
import Testing

/// Cutting sway's IPC stream into messages.
@Suite struct SwayIPCFrameReaderTests {
    @Test func messagesComeOutWhateverThePiecesTheyArriveIn() throws {
        let messages = [
            SwayIPCMessage(type: 2, payload: Array(#"{"success": true}"#.utf8)),
            SwayIPCMessage(type: 0x8000_0003, payload: []),
            SwayIPCMessage(type: 4, payload: Array(repeating: UInt8(ascii: " "), count: 70_000)),
        ]
        let stream = messages.flatMap(\.encoded)
        for pieceSize in [1, 5, 13, 14, 4096, stream.count] {
            var reader = SwayIPCFrameReader(limit: 1 << 20)
            var read: [SwayIPCMessage] = []
            for start in stride(from: 0, to: stream.count, by: pieceSize) {
                reader.append(stream[start..<min(stream.count, start + pieceSize)])
                while let message = try reader.next() { read.append(message) }
            }
            #expect(read == messages, "pieces of \(pieceSize)")
            #expect(reader.pendingByteCount == 0)
        }
    }

    @Test func theHeaderIsLittleEndian() {
        #expect(SwayIPCMessage(type: 0x8000_0003, payload: [1, 2]).encoded
            == Array("i3-ipc".utf8) + [2, 0, 0, 0, 3, 0, 0, 0x80, 1, 2])
    }

    @Test func aWrongMagicIsRefusedAsSoonAsItShows() {
        var reader = SwayIPCFrameReader(limit: 100)
        reader.append(Array("i3".utf8))
        #expect(throws: Never.self) { try reader.next() }
        reader.append(Array("x".utf8))
        #expect(throws: SwayIPCError.badMagic) { try reader.next() }
    }

    @Test func anOversizedMessageIsRefusedAtItsHeader() {
        var reader = SwayIPCFrameReader(limit: 100)
        reader.append(SwayIPCMessage(type: 4, payload: Array(repeating: 0, count: 101)).encoded.prefix(14))
        #expect(throws: SwayIPCError.messageTooLarge(length: 101, limit: 100)) { try reader.next() }
        var exact = SwayIPCFrameReader(limit: 100)
        exact.append(SwayIPCMessage(type: 4, payload: Array(repeating: 0, count: 100)).encoded)
        #expect((try? exact.next())??.payload.count == 100)
    }
}
