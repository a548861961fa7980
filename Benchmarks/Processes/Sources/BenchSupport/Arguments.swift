import Harness
/// `--name value` options and `--flag`s of a command line, after its mode word.
public struct Arguments: Sendable {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    /// The options of `words`.
    /// - Throws: `HarnessError` for a word that is not an option or the value of one.
    public init(_ words: ArraySlice<String>) throws {
        var words = words[...]
        while let word = words.popFirst() {
            guard word.hasPrefix("--") else { throw HarnessError("unexpected argument \(word)") }
            let name = String(word.dropFirst(2))
            if let next = words.first, !next.hasPrefix("--") {
                values[name] = next
                words.removeFirst()
            } else {
                flags.insert(name)
            }
        }
    }

    /// The value of `--name`, if given.
    public func optional(_ name: String) -> String? { values[name] }

    /// The value of `--name`, or `value`.
    public func string(_ name: String, default value: String) -> String { values[name] ?? value }

    /// The whole number of `--name`, or `value`.
    public func integer(_ name: String, default value: Int) -> Int { values[name].flatMap { Int($0) } ?? value }

    /// Whether `--name` was given without a value.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as one of `T`'s, or `value`.
    /// - Throws: `HarnessError` for a value that is not one of them.
    public func choice<T: RawRepresentable>(_ name: String, default value: T) throws -> T where T.RawValue == String {
        guard let text = values[name] else { return value }
        guard let choice = T(rawValue: text) else { throw HarnessError("--\(name): unknown value \(text)") }
        return choice
    }
}
