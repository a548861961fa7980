/// The ID of every key a bus knows, looked up on each publish by key.
///
/// `Dictionary<String, Int32>` hashes the key with SipHash, about half of a publish by key. Keys
/// that are ASCII (every built-in key) are also kept in a table of its own: open addressing over
/// a power-of-two array, hashed 16 bytes at a time with a random seed, and
/// compared byte by byte, which for ASCII is what `String`'s `==` decides too. A key that is not
/// ASCII, or not in that table, goes to the dictionary, which keeps Swift's equality (canonical
/// equivalence: the Kelvin sign `K` equals the letter `K`), so both always give the same ID.
struct KeyIndex {
    private struct Slot {
        var hash: UInt64
        var id: Int32
        var key: String
    }

    private static let empty = Slot(hash: 0, id: -1, key: "")

    /// Random per index, kept in it (a `static` would be read through a one-time initialiser check
    /// on every lookup).
    private let seed = UInt64.random(in: .min ... .max)

    /// Every key, by Swift's equality.
    private var ids: [String: Int32] = [:]
    /// ASCII keys: a power-of-two count of slots, at most half used (`id` -1: empty).
    private var slots = [Slot](repeating: KeyIndex.empty, count: 16)
    private var asciiCount = 0

    /// The ID of `key`, if it has one.
    @inline(__always)
    func id(of key: String) -> Int32? {
        if let hash = Self.asciiHash(key, seed: seed) {
            let mask = slots.count - 1
            var i = Int(truncatingIfNeeded: hash) & mask
            while slots[i].id >= 0 {
                if slots[i].hash == hash && slots[i].key == key { return slots[i].id }
                i = (i + 1) & mask
            }
        }
        return ids[key]
    }

    /// Gives `key` the ID `id` (a key it does not have yet, by `id(of:)`).
    mutating func insert(_ key: String, id: Int32) {
        if ids[key] == nil { ids[key] = id }
        guard let hash = Self.asciiHash(key, seed: seed) else { return }
        if (asciiCount + 1) * 2 > slots.count { grow() }
        place(Slot(hash: hash, id: id, key: key))
        asciiCount += 1
    }

    private mutating func place(_ slot: Slot) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[i].id >= 0 { i = (i + 1) & mask }
        slots[i] = slot
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Self.empty, count: old.count * 2)
        for slot in old where slot.id >= 0 { place(slot) }
    }

    /// A seeded hash of the key's UTF-8 bytes, 16 at a time; `nil` when the key is not ASCII
    /// (or not stored contiguously).
    ///
    /// Each 16 bytes are folded with one 64 × 64 → 128-bit multiply of their two words (each
    /// mixed with the running hash or a constant), whose halves are xored, as wyhash does; the
    /// last (up to) 16 bytes are read as two words that may overlap what came before, and the
    /// length is in the seed, so keys of different lengths differ even where the words agree.
    static func asciiHash(_ key: String, seed: UInt64) -> UInt64? {
        key.utf8.withContiguousStorageIfAvailable { bytes -> UInt64? in
            let raw = UnsafeRawBufferPointer(bytes)
            let count = raw.count
            var hash = seed ^ UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
            var high: UInt64 = 0
            var offset = 0
            while offset + 16 < count {
                let first = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let second = raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
                high |= first | second
                hash = fold(first ^ 0xA076_1D64_78BD_642F, second ^ hash)
                offset += 16
            }
            let first: UInt64
            let second: UInt64
            if count >= 16 {
                first = raw.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
                second = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            } else if count >= 8 {
                first = raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
                second = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            } else {
                var word: UInt64 = 0
                for i in 0..<count { word |= UInt64(raw[i]) << (8 * UInt64(i)) }
                first = word
                second = 0
            }
            high |= first | second
            guard high & 0x8080_8080_8080_8080 == 0 else { return nil }
            hash = fold(first ^ 0xE703_7ED1_A0B4_28DB, second ^ hash)
            return fold(hash ^ 0x8EBC_6AF0_9C88_C6E3, 0x5899_65CC_7537_4CC3)
        } ?? nil
    }

    /// The two halves of `a × b`, xored.
    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }
}
