/// The ID of every key a bus knows, looked up on each publish by key.
///
/// `Dictionary<String, Int32>` hashes the key with SipHash, about half of a publish by key. Keys
/// that are ASCII (every built-in key) are also kept in a table of its own: open addressing over
/// a power-of-two array, hashed a word (8 bytes) at a time with a per-process random seed, and
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

    /// A seeded hash of the key's UTF-8 bytes, 8 at a time; `nil` when the key is not ASCII
    /// (or not stored contiguously).
    static func asciiHash(_ key: String, seed: UInt64) -> UInt64? {
        key.utf8.withContiguousStorageIfAvailable { bytes -> UInt64? in
            let raw = UnsafeRawBufferPointer(bytes)
            let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
            var hash = seed ^ UInt64(truncatingIfNeeded: raw.count)
            var high: UInt64 = 0
            var offset = 0
            while offset + 8 <= raw.count {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                high |= word
                hash = (hash ^ word) &* multiplier
                hash ^= hash >> 29
                offset += 8
            }
            var tail: UInt64 = 0
            if offset < raw.count {
                if raw.count >= 8 {
                    // The last 8 bytes, overlapping the last word; the length is in the seed.
                    tail = raw.loadUnaligned(fromByteOffset: raw.count - 8, as: UInt64.self)
                } else {
                    for i in 0..<raw.count { tail |= UInt64(raw[i]) << (8 * UInt64(i)) }
                }
            }
            high |= tail
            guard high & 0x8080_8080_8080_8080 == 0 else { return nil }
            hash = (hash ^ tail) &* multiplier
            // The final mix of MurmurHash3 (fmix64): every bit of the input reaches the low bits.
            hash ^= hash >> 33
            hash &*= 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 33
            hash &*= 0xC4CE_B9FE_1A85_EC53
            hash ^= hash >> 33
            return hash
        } ?? nil
    }
}
