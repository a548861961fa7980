package import Mosquitto
import SystemSupport

#if canImport(Glibc)
import Glibc
#endif

/// A setting of the MQTT link or watcher that cannot be used: the message names what is wrong.
/// The tools exit 64 with it.
public struct MQTTConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in words.
    package var message: String

    /// An error saying `message`.
    package init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// Where the broker is and how to talk to it: the `--mqtt URL` and the `--mqtt-config FILE`
/// (specification: Publishing a fleet to MQTT).
public struct MQTTBrokerSettings: Sendable, Hashable {
    /// The broker's host name or address (IPv6 without brackets).
    package var host: String
    /// The broker's port: from the URL, else 1883 (`mqtt`) or 8883 (`mqtts`).
    package var port: Int
    /// Whether the URL said `mqtts`.
    package var usesTLS: Bool
    /// `username`.
    package var username: String?
    /// `password`.
    package var password: String?
    /// `ca-file`.
    package var caFile: String?
    /// `cert-file`.
    package var certFile: String?
    /// `key-file`.
    package var keyFile: String?
    /// `keepalive`, in seconds (default 60).
    package var keepalive: Int = 60
    /// `client-id`, if the file gives one.
    package var clientID: String?

    /// The keys a config file may hold.
    package static let configKeys = [
        "username", "password", "ca-file", "cert-file", "key-file", "keepalive", "client-id",
    ]

    /// Settings from `url` (`mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`, `[v6]` in brackets).
    /// - Throws: `MQTTConfigurationError` naming what is wrong with the URL.
    public init(url: String) throws(MQTTConfigurationError) {
        let tail: Substring
        if url.hasPrefix("mqtt://") {
            usesTLS = false
            tail = url.dropFirst(7)
        } else if url.hasPrefix("mqtts://") {
            usesTLS = true
            tail = url.dropFirst(8)
        } else {
            throw MQTTConfigurationError("malformed MQTT URL \"\(url)\": it must start with mqtt:// or mqtts://")
        }
        var authority = tail
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("@") {
            throw MQTTConfigurationError(
                "malformed MQTT URL \"\(url)\": credentials belong in the --mqtt-config file, not on the command line")
        }
        if authority.contains("/") || authority.contains("?") || authority.contains("#") {
            throw MQTTConfigurationError("malformed MQTT URL \"\(url)\": only mqtt[s]://HOST[:PORT] is accepted")
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw MQTTConfigurationError("malformed MQTT URL \"\(url)\": an IPv6 address lacks its ]")
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw MQTTConfigurationError("malformed MQTT URL \"\(url)\"") }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        if host.isEmpty { throw MQTTConfigurationError("malformed MQTT URL \"\(url)\": no host") }
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw MQTTConfigurationError("malformed MQTT URL \"\(url)\": the port must be a number from 1 to 65535")
            }
            port = number
        } else {
            port = usesTLS ? 8883 : 1883
        }
    }

    /// Reads a config file of `key = value` lines (blank lines and lines starting with `#`
    /// ignored; the value is the rest of the line, trimmed) into these settings.
    /// - Throws: `MQTTConfigurationError`: the file cannot be read, a line has no `=`, a key is
    ///   unknown or given twice, a value is bad (a keepalive outside 5…65535, a file named by
    ///   `ca-file`, `cert-file` or `key-file` that cannot be read), or TLS files with an `mqtt://` URL.
    package mutating func readConfig(path: String) throws(MQTTConfigurationError) {
        let limit = 1 << 20  // a config file is a few lines
        switch SmallFile.contents(of: path, limit: limit + 1) {
        case .failure(let error):
            throw MQTTConfigurationError("cannot read the MQTT config file \(path): \(error)")
        case .success(let bytes) where bytes.count > limit:
            throw MQTTConfigurationError("the MQTT config file \(path) is larger than 1 MiB")
        case .success(let bytes):
            try readConfig(text: String(decoding: bytes, as: UTF8.self), path: path)
        }
    }

    /// Reads config file text; `path` names it in errors.
    public mutating func readConfig(text: String, path: String) throws(MQTTConfigurationError) {
        var seen: Set<String> = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(path), line \(number + 1)"
            guard let equals = line.firstIndex(of: "=") else {
                throw MQTTConfigurationError("\(place): expected key = value, found \"\(line)\"")
            }
            let key = String(line[..<equals].trimmingWhitespace())
            let value = String(line[line.index(after: equals)...].trimmingWhitespace())
            guard Self.configKeys.contains(key) else {
                throw MQTTConfigurationError(
                    "\(place): unknown key \"\(key)\" (the keys are: \(Self.configKeys.joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw MQTTConfigurationError("\(place): \(key) is given twice") }
            guard !value.isEmpty else { throw MQTTConfigurationError("\(place): \(key) has no value") }
            switch key {
            case "username": username = value
            case "password": password = value
            case "ca-file", "cert-file", "key-file":
                guard access(value, R_OK) == 0 else {
                    throw MQTTConfigurationError("\(place): \(key) \(value) cannot be read: \(ErrnoText.of(errno))")
                }
                if key == "ca-file" { caFile = value } else if key == "cert-file" { certFile = value } else { keyFile = value }
            case "keepalive":
                guard let seconds = Int(value), (5...65_535).contains(seconds) else {
                    throw MQTTConfigurationError("\(place): keepalive must be a number of seconds from 5 to 65535, not \"\(value)\"")
                }
                keepalive = seconds
            default: clientID = value
            }
        }
        if (certFile == nil) != (keyFile == nil) {
            throw MQTTConfigurationError("\(path): cert-file and key-file go together")
        }
        if password != nil, username == nil {
            throw MQTTConfigurationError("\(path): a password needs a username")
        }
        if !usesTLS, caFile != nil || certFile != nil {
            throw MQTTConfigurationError("\(path): ca-file, cert-file and key-file need an mqtts:// URL")
        }
    }

    /// The libmosquitto configuration for a client `clientID` with these settings, speaking
    /// `protocolVersion` (MQTT 5 first; 3.1.1 where the broker refuses 5).
    package func mosquittoConfiguration(
        clientID: String, cleanSession: Bool, will: MosquittoConfiguration.Will?,
        protocolVersion: MosquittoConfiguration.ProtocolVersion
    ) -> MosquittoConfiguration {
        let tls = usesTLS ? MosquittoConfiguration.TLS(caFile: caFile, certFile: certFile, keyFile: keyFile) : nil
        return MosquittoConfiguration(
            host: host, port: port, clientID: clientID, keepalive: keepalive, protocolVersion: protocolVersion,
            cleanSession: cleanSession, username: username, password: password, tls: tls, will: will)
    }

    /// Why the broker's host name did not resolve, in words.
    func reason(_ failure: HostLookup.Failure) -> String {
        switch failure {
        case .unresolved: "cannot resolve the broker's host name \(host): \(failure.reason)"
        case .noThread: "cannot start a thread to resolve \(host): \(failure.reason)"
        }
    }

    /// The URL these settings came from, for messages.
    package var url: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }
}

extension StringProtocol {
    fileprivate func trimmingWhitespace() -> SubSequence {
        var start = startIndex
        var end = endIndex
        while start < end, self[start].isWhitespace { start = index(after: start) }
        while end > start, self[index(before: end)].isWhitespace { end = index(before: end) }
        return self[start..<end]
    }
}
