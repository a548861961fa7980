import NotifyBus
import Testing

/// Keys are told apart exactly as `String`'s `==` tells them apart, whatever their length or script.
@Suite struct KeyIndexTests {
    @Test func manyKeysOfEveryLengthKeepTheirOwnValues() {
        let bus = NotificationBus(clock: .zero)
        // Lengths 0…40 (inline small strings and heap strings, whole words and tails), and enough
        // keys to grow the table several times.
        var keys = (0...40).map { String(repeating: "k", count: $0) }
        keys += (0..<3000).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
        keys += ["a/b", "a/c", "b/a", "ab", "ba", "battery/BAT0/state", "battery/BAT1/state"]
        for (i, key) in keys.enumerated() { bus.publish(key, .integer(Int64(i)), at: .zero) }
        for (i, key) in keys.enumerated() { #expect(bus.value(forKey: key) == .integer(Int64(i)), "\(key)") }
        #expect(bus.snapshot().count == keys.count)
        #expect(bus.value(forKey: "device/sensor0/reading10") == nil)
        #expect(bus.value(forKey: "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk") == nil)
    }

    @Test func canonicallyEquivalentKeysAreOneKey() {
        let bus = NotificationBus(clock: .zero)
        let sub = bus.subscribe(at: .zero)
        // "\u{212A}" (KELVIN SIGN) is canonically equivalent to "K"; "e\u{301}" to "é".
        bus.publish("\u{212A}elvin", 1, at: .zero)
        bus.publish("Kelvin", 2, at: .zero)
        bus.publish("caf\u{E9}", "a", at: .zero)
        bus.publish("cafe\u{301}", "b", at: .zero)
        #expect(bus.snapshot().count == 2)
        #expect(bus.value(forKey: "Kelvin") == 2)
        #expect(bus.value(forKey: "\u{212A}elvin") == 2)
        #expect(bus.value(forKey: "caf\u{E9}") == "b")
        let notes = sub.pollNotes()
        #expect(notes.map(\.value) == [1, 2, "a", "b"])
        #expect(notes[1].previous == 1 && notes[3].previous == "a")
    }

    @Test func handlesAndKeysAgreeForNonASCIIKeys() {
        let bus = NotificationBus(clock: .zero)
        let handle = bus.handle(for: "settings/org.example/gr\u{FC}\u{DF}e")
        bus.publish("settings/org.example/gr\u{FC}\u{DF}e", 1, at: .zero)
        bus.publish(handle, 2, at: .zero)
        #expect(bus.value(forKey: "settings/org.example/gru\u{308}\u{DF}e") == 2)
        #expect(bus.snapshot().count == 1)
    }
}
