/// A bad log: which file, which line, and what is wrong with it.
public struct EventLogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as the user named it (`-` or `<stdin>` for standard input).
    public var file: String
    /// The 1-based line number; `nil` when the problem is with the file as a whole.
    public var line: Int?
    /// What is wrong, in words.
    public var message: String

    /// An error about `file` (at `line`, when given) that says `message`.
    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`, as compilers write it.
    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
