import NotifyBus
import Testing

/// Patterns: the matcher against a plain reference, what a pattern costs, and empty segments.
@Suite struct KeyPatternTests {
    @Test(arguments: [
        ("**", "a", true), ("**", "a/b/c", true), ("*", "a", true), ("*", "a/b", false),
        ("battery/*/state", "battery/BAT0/state", true), ("battery/*/state", "battery/BAT0/level", false),
        ("battery/**", "battery", true), ("battery/**", "battery/BAT0/level", true), ("battery/**", "batteryX", false),
        ("**/state", "battery/BAT0/state", true), ("**/state", "state", true), ("a/**/b", "a/b", true),
        ("a/**/b", "a/x/y/b", true), ("a/**/b", "a/x/y/c", false), ("orientation", "orientation", true),
        ("orientation", "orientation/x", false), ("bat*", "battery", false), ("bat*", "bat*", true),
        ("**/**", "a", true), ("*/**", "a", true), ("*/*/**", "a", false), ("a/**/**/b", "a/b", true),
        ("", "", true), ("", "a", false), ("*", "", true), ("**", "", true), ("a/", "a/", true), ("a/", "a", false),
        ("/a", "/a", true), ("a//b", "a//b", true), ("a/*/b", "a//b", true), ("a/**/b", "a//b", true),
        ("\u{212A}elvin/*", "Kelvin/x", true), ("Kelvin/*", "\u{212A}elvin/x", true), ("caf\u{E9}", "cafe\u{301}", true),
        ("a/\u{301}", "a/\u{301}", true), ("a/*", "a/\u{301}", false), ("*", "a/\u{301}", true),
    ])
    func matches(pattern: String, key: String, expected: Bool) {
        #expect(KeyPattern(pattern).matches(key) == expected)
    }

    /// Key and pattern segments to draw from: wildcards, empty segments, look-alikes, canonically
    /// equivalent spellings, and characters that join a `/` into one `Character` (a combining mark,
    /// a joiner or a spacing mark after it, a prepended mark before it), which do not split.
    static let pieces = [
        "a", "b", "ab", "", "*", "**", "*", "**", "x*", "*x", "***", "\u{E9}", "e\u{301}", "\u{212A}", "K",
        "\u{FC}ber", "\u{301}", "\u{600}", "\u{1F600}", "\u{200D}", "\u{903}", "\u{1F1E6}", "\r", ";", "\u{37E}", "`", "\u{1FEF}",
    ]

    static func randomText(_ rng: inout SeededRandom, segments: ClosedRange<Int>) -> String {
        (0..<Int.random(in: segments, using: &rng)).map { _ in
            // Now and then two pieces in one segment.
            let piece = pieces.randomElement(using: &rng)!
            return Int.random(in: 0..<6, using: &rng) == 0 ? piece + pieces.randomElement(using: &rng)! : piece
        }.joined(separator: "/")
    }

    static func reference(_ pattern: String, _ key: String) -> Bool {
        ReferenceModel.match(
            pattern.split(separator: "/", omittingEmptySubsequences: false),
            key.split(separator: "/", omittingEmptySubsequences: false))
    }

    @Test func randomPatternsAndKeysAgreeWithTheReferenceMatcher() {
        var rng = SeededRandom(seed: 7)
        var disagreements: [String] = []
        for _ in 0..<200_000 where disagreements.count < 5 {
            let pattern = Self.randomText(&rng, segments: 0...6)
            let key = Self.randomText(&rng, segments: 0...6)
            let expected = Self.reference(pattern, key)
            if KeyPattern(pattern).matches(key) != expected {
                disagreements.append("\(pattern.debugDescription) vs \(key.debugDescription): expected \(expected)")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    @Test func aKeyMatchedAgainstManyPatternsAgreesWithTheReferenceMatcher() {
        var rng = SeededRandom(seed: 11)
        for _ in 0..<300 {
            let bus = NotificationBus(clock: .zero)
            let keys = Set((0..<20).map { _ in Self.randomText(&rng, segments: 1...4) })
            for key in keys { bus.publish(key, 1, at: .zero) }
            let patterns = (0..<Int.random(in: 1...6, using: &rng)).map { _ in Self.randomText(&rng, segments: 0...4) }
            let expected = keys.filter { key in patterns.contains { Self.reference($0, key) } }
            let got = bus.snapshot(matching: patterns.map { KeyPattern($0) }).map(\.key)
            #expect(Set(got) == expected, "\(patterns)")
            #expect(got.count == Set(got).count)
            let sub = bus.subscribe(patterns.map { KeyPattern($0) }, initial: .current, at: .zero)
            #expect(Set(sub.pollNotes().map(\.key)) == expected, "\(patterns)")
        }
    }

    @Test func longPatternsMatchWithoutBlowingUp() {
        let slashes = String(repeating: "/", count: 1024)
        #expect(KeyPattern(slashes).matches(slashes))
        #expect(!KeyPattern(slashes).matches("a"))
        let stars = Array(repeating: "**/a", count: 200).joined(separator: "/") + "/b"
        let key = Array(repeating: "a", count: 1000).joined(separator: "/")
        #expect(!KeyPattern(stars).matches(key))
        #expect(KeyPattern(stars).matches(key + "/b"))
        let anyRun = String(repeating: "**/", count: 500) + "x"
        #expect(KeyPattern(anyRun).matches("x") && KeyPattern(anyRun).matches(key + "/x") && !KeyPattern(anyRun).matches(key))
    }

    /// A pattern keeps its text and nothing else that owns memory: a 1024-byte pattern costs
    /// about 1 KB, not one stored value per segment.
    @Test func aPatternCostsAboutTheBytesOfItsText() {
        func isTrivial(_ value: Any) -> Bool {
            func trivial<T>(_: T) -> Bool { _isPOD(T.self) }
            return _openExistential(value, do: trivial)
        }
        let pattern = KeyPattern(String(repeating: "/", count: 1024))
        for child in Mirror(reflecting: pattern).children where child.label != "text" {
            #expect(isTrivial(child.value), "\(child.label ?? "?") owns memory")
        }
        #expect(MemoryLayout<KeyPattern>.size <= 32)
        #expect(pattern.storageByteCount <= 1024 + 32)
        #expect(KeyPattern(String(repeating: "a/**/*/", count: 146) + "b").storageByteCount <= 1024 + 32)
    }

    @Test(arguments: [
        ("", "pattern \"\" is empty"), ("/a", "pattern \"/a\" starts with \"/\" (an empty first segment)"),
        ("a/", "pattern \"a/\" ends with \"/\" (an empty last segment)"), ("/", "pattern \"/\" starts with \"/\" (an empty first segment)"),
        ("a//b", "pattern \"a//b\" has \"//\" (an empty segment)"), ("\u{E9}//b", "pattern \"\u{E9}//b\" has \"//\" (an empty segment)"),
    ])
    func emptySegmentsAreNamed(text: String, message: String) {
        #expect(KeyPattern.emptySegmentProblem(in: text) == message)
    }

    @Test(arguments: ["a", "**", "*", "a/*/b", "battery/**", "\u{E9}/b", "a/\u{301}"])
    func patternsWithoutEmptySegmentsPass(text: String) {
        #expect(KeyPattern.emptySegmentProblem(in: text) == nil)
    }

    @Test func aProblemMessageNamesEvenAStrangePattern() {
        let message = KeyPattern.emptySegmentProblem(in: "a\n\"//")
        #expect(message == "pattern \"a\\n\\\"//\" has \"//\" (an empty segment)")
    }
}
