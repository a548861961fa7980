#if canImport(Glibc)
import Glibc
#endif

/// Reads the parts of TZif data (RFC 8536) in order: a header, a data block, and the footer.
struct TZifReader {
    /// A header's version and counts.
    struct Header {
        var version: Int
        var isUTCCount: Int
        var isStandardCount: Int
        var leapCount: Int
        var timeCount: Int
        var typeCount: Int
        var characterCount: Int
    }

    /// A data block's transitions and local time types.
    struct DataBlock {
        var transitions: [Int64]
        /// Index into `types` for each transition.
        var transitionTypes: [Int]
        var types: [TimeZoneRules.LocalTimeType]
    }

    let bytes: [UInt8]
    private(set) var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func header() throws(TimeZoneRules.FormatError) -> Header {
        guard position + 44 <= bytes.count else { throw .init("header cut short") }
        guard bytes[position..<position + 4].elementsEqual("TZif".utf8) else { throw .init("not TZif data (no 'TZif' magic)") }
        let versionByte = bytes[position + 4]
        let version: Int = versionByte == 0 ? 1 : (versionByte >= 0x32 && versionByte <= 0x39 ? Int(versionByte) - 0x30 : 0)
        guard version > 0 else { throw .init("unknown TZif version byte \(versionByte)") }
        position += 20
        var counts: [Int] = []
        for _ in 0..<6 { counts.append(Int(try uint32())) }
        let header = Header(
            version: version, isUTCCount: counts[0], isStandardCount: counts[1], leapCount: counts[2],
            timeCount: counts[3], typeCount: counts[4], characterCount: counts[5])
        guard header.typeCount > 0 else { throw .init("no local time types") }
        return header
    }

    /// The size of the data block that `header` describes, for times of `timeSize` bytes.
    func blockSize(_ header: Header, timeSize: Int) -> Int {
        header.timeCount * timeSize + header.timeCount + header.typeCount * 6 + header.characterCount
            + header.leapCount * (timeSize + 4) + header.isStandardCount + header.isUTCCount
    }

    mutating func skipDataBlock(_ header: Header, timeSize: Int) throws(TimeZoneRules.FormatError) {
        let size = blockSize(header, timeSize: timeSize)
        guard position + size <= bytes.count else { throw .init("data block cut short") }
        position += size
    }

    mutating func dataBlock(_ header: Header, timeSize: Int) throws(TimeZoneRules.FormatError) -> DataBlock {
        let size = blockSize(header, timeSize: timeSize)
        guard position + size <= bytes.count else { throw .init("data block cut short") }
        let end = position + size
        var transitions: [Int64] = []
        transitions.reserveCapacity(header.timeCount)
        for _ in 0..<header.timeCount {
            transitions.append(timeSize == 8 ? Int64(bitPattern: try uint64()) : Int64(Int32(bitPattern: try uint32())))
        }
        var indices: [Int] = []
        for _ in 0..<header.timeCount {
            let index = Int(bytes[position])
            guard index < header.typeCount else { throw .init("transition type \(index) out of range") }
            indices.append(index)
            position += 1
        }
        var types: [TimeZoneRules.LocalTimeType] = []
        for _ in 0..<header.typeCount {
            let offset = Int(Int32(bitPattern: try uint32()))
            let isDST = bytes[position] != 0
            position += 2  // isdst, desigidx
            types.append(.init(utcOffset: offset, isDaylightSaving: isDST))
        }
        position = end
        for index in transitions.indices.dropFirst() where transitions[index] <= transitions[index - 1] {
            throw .init("transition times not ascending at \(index)")
        }
        return DataBlock(transitions: transitions, transitionTypes: indices, types: types)
    }

    /// The footer's TZ string (between two newlines), `nil` when there is none.
    mutating func footer() -> String? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\n") else { return nil }
        let start = position + 1
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        position = end + 1
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private mutating func uint32() throws(TimeZoneRules.FormatError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw .init("data cut short") }
        var value: UInt32 = 0
        for byte in bytes[position..<position + 4] { value = value << 8 | UInt32(byte) }
        position += 4
        return value
    }

    private mutating func uint64() throws(TimeZoneRules.FormatError) -> UInt64 {
        let high = UInt64(try uint32())
        return high << 32 | UInt64(try uint32())
    }
}
