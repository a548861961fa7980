import Logging

/// Where a source's watcher tells what it skipped (a property of the wrong type, a malformed
/// signal, a failed call): the source's `Logger`, at `warning`, with the metadata `source`, and
/// `key` and `peer` where they are known. What is skipped never changes the source's status.
struct SourceProblems: Sendable {
    /// The source's logger (its metadata carries `source`).
    let logger: Logger
    /// The key every problem of the source concerns, for a source of one key (`locale`).
    var key: String?

    /// Logs `message` with the key and the peer (a bus name) it concerns.
    func callAsFunction(_ message: String, key: String? = nil, peer: String? = nil) {
        var metadata: Logger.Metadata = [:]
        if let key = key ?? self.key { metadata["key"] = .string(key) }
        if let peer { metadata["peer"] = .string(peer) }
        logger.warning("\(message)", metadata: metadata)
    }
}
