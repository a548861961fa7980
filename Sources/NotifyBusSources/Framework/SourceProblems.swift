import Logging

/// Where a source's watcher tells what it skipped (a property of the wrong type, a malformed
/// signal, a failed call): the source's `Logger`, at `warning`, with the metadata `source`, and
/// `key` and `peer` where they are known. What is normal where it happens (a service that is
/// not installed, a fallback taken, a device that is not there) goes to `note`, at `debug`: a
/// warning is for what someone should look at. Neither changes the source's status.
struct SourceProblems: Sendable {
    /// The source's logger (its metadata carries `source`).
    let logger: Logger
    /// The key every problem of the source concerns, for a source of one key (`locale`).
    var key: String?

    /// Logs `message` at `warning`, with the key and the peer (a bus name) it concerns.
    func callAsFunction(_ message: String, key: String? = nil, peer: String? = nil) {
        logger.warning("\(message)", metadata: metadata(key: key, peer: peer))
    }

    /// Logs `message` at `debug`, with the key and the peer it concerns: what the source did
    /// about a normal condition, for whoever wants to know why a value came from where it did.
    func note(_ message: String, key: String? = nil, peer: String? = nil) {
        logger.debug("\(message)", metadata: metadata(key: key, peer: peer))
    }

    private func metadata(key: String?, peer: String?) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let key = key ?? self.key { metadata["key"] = .string(key) }
        if let peer { metadata["peer"] = .string(peer) }
        return metadata
    }
}
