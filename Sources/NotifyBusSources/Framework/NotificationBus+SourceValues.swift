public import NotifyBus

extension NotificationBus {
    /// The longest value a built-in source publishes: its compact UTF-8 JSON text, in bytes. A
    /// longer one is logged as a source problem and not published, so no single notification
    /// approaches the daemon's 1 MiB signal bound.
    public static let maximumSourceValueBytes = 65_536

    /// Publishes a source's value for `key` when it differs from the stored one, and when its
    /// JSON text is at most `maximumSourceValueBytes` long; a longer value is reported to
    /// `problem` with its key and length, and the key keeps its previous value.
    /// - Returns: whether it was published.
    @discardableResult
    func publishSourceValue(_ key: String, _ value: JSONValue, problem: SourceProblems) -> Bool {
        publishSourceValues([(key, value)], problem: problem) == 1
    }

    /// Publishes the values of one reading of a source (a uevent, a `PropertiesChanged`, a
    /// `ReadAll`) as one batch: at one time, under one lock, so a subscriber is woken once and a
    /// daemon's subscriber gets them in one `Events` signal. Each value is published when it
    /// differs from the stored one and its JSON text is at most `maximumSourceValueBytes` long; a
    /// longer one is reported to `problem` with its key and length, and the key keeps its value.
    /// - Returns: how many were published.
    @discardableResult
    func publishSourceValues(_ values: [(key: String, value: JSONValue)], problem: SourceProblems) -> Int {
        let accepted = values.filter { key, value in
            guard Self.jsonLengthBound(value) > Self.maximumSourceValueBytes else { return true }
            let length = value.jsonText.utf8.count
            guard length > Self.maximumSourceValueBytes else { return true }
            // The key in the text too: a log handler may print the message without its metadata.
            problem(
                "key \(key): a value of \(length) bytes of JSON is longer than \(Self.maximumSourceValueBytes): not published",
                key: key)
            return false
        }
        return publishIfChanged(accepted)
    }

    /// At least the length of `value`'s JSON text, found without writing it: a string's bytes
    /// may each become an escape of up to 6, a number takes at most 32.
    static func jsonLengthBound(_ value: JSONValue) -> Int {
        switch value {
        case .null, .bool: 5
        case .integer, .number: 32
        case .decimal(let decimal): decimal.description.utf8.count
        case .string(let text): 2 + 6 * text.utf8.count
        case .array(let elements): elements.reduce(2) { $0 + 1 + jsonLengthBound($1) }
        case .object(let object): object.reduce(2) { $0 + 2 + jsonLengthBound(.string($1.key)) + jsonLengthBound($1.value) }
        }
    }
}
