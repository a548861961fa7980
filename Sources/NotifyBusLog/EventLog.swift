public import NotifyBus

/// An event log, format version 1 (specification: Event log format): a header and timed records.
///
/// See <doc:ReplayingLogs> for reading, replaying and recording logs in Swift.
public struct EventLog: Sendable {
    /// The name it was read from, for error messages.
    public var file: String
    /// The header's fields (`format`, `version` and any metadata).
    public var header: JSONObject
    /// The records, in order.
    public var entries: [LogEntry]
    /// The bad lines passed over (only when reading with `skippingBadLines`).
    public var skipped: [EventLogError]

    /// The format version this library reads and writes.
    public static let version = 1
    /// The value of the header's `format` field.
    public static let formatName = "notifybus-log"

    /// A log made in memory, to write or to replay.
    ///
    /// - Parameters:
    ///   - file: the name to use in error messages.
    ///   - header: the header's fields; a version 1 header without metadata by default.
    ///   - entries: the records, in order.
    public init(file: String = "<log>", header: JSONObject = EventLog.header(), entries: [LogEntry] = []) {
        self.file = file
        self.header = header
        self.entries = entries
        self.skipped = []
    }

    /// A version 1 header with extra metadata fields (for example `recorded`, `host`, `sources`).
    public static func header(_ metadata: JSONObject = [:]) -> JSONObject {
        var header: JSONObject = ["format": .string(formatName), "version": .integer(Int64(version))]
        for (k, v) in metadata where k != "format" && k != "version" { header[k] = v }
        return header
    }

    /// Reads a whole log from text.
    ///
    /// Stops at the first bad line and throws an error naming `file`, the line and the
    /// problem, unless `skippingBadLines`: then bad lines are collected in `skipped`.
    public init(parsing text: String, file: String = "<log>", skippingBadLines: Bool = false) throws(EventLogError) {
        let (log, error) = EventLog.readPrefix(of: text, file: file, skippingBadLines: skippingBadLines)
        if let error { throw error }
        guard let log else { throw EventLogError(file: file, line: nil, message: "no header") }
        self = log
    }

    /// Reads a log up to its first bad line: the records before it (when the header was
    /// good) and the error, if there was one. With `skippingBadLines`, bad lines are
    /// collected in `skipped` instead and only a missing header is an error.
    public static func readPrefix(
        of text: String, file: String = "<log>", skippingBadLines: Bool = false
    ) -> (log: EventLog?, error: EventLogError?) {
        readPrefix(of: Array(text.utf8), file: file, skippingBadLines: skippingBadLines)
    }

    /// Reads a log from UTF-8 bytes, as `readPrefix(of:file:skippingBadLines:)` does from text;
    /// a line that is not valid UTF-8 is a bad line.
    public static func readPrefix(
        of bytes: [UInt8], file: String = "<log>", skippingBadLines: Bool = false
    ) -> (log: EventLog?, error: EventLogError?) {
        var parser = EventLogParser(file: file)
        var entries: [LogEntry] = []
        var skipped: [EventLogError] = []
        var failure: EventLogError?
        var lineNumber = 0
        for bytesOfLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            do throws(EventLogError) {
                guard let line = String(validating: bytesOfLine, as: UTF8.self) else {
                    throw EventLogError(file: file, line: lineNumber, message: "the line is not valid UTF-8")
                }
                if let entry = try parser.parse(line: Substring(line), number: lineNumber) { entries.append(entry) }
            } catch {
                if skippingBadLines && parser.header != nil {
                    skipped.append(error)
                    continue
                }
                failure = error
                break
            }
        }
        guard let header = parser.header else {
            return (nil, failure ?? EventLogError(
                file: file, line: nil,
                message: "no header: a log starts with {\"format\": \"notifybus-log\", \"version\": 1}"))
        }
        var log = EventLog(file: file, header: header, entries: entries)
        log.skipped = skipped
        return (log, failure)
    }

    /// The whole log as text: the header line, then one line per record.
    public var text: String {
        var out = JSONValue.object(header).jsonText + "\n"
        for entry in entries { out += entry.jsonText + "\n" }
        return out
    }
}

/// Reads a log line by line, checking each against the specification (Event log format).
///
/// It checks what a line says by itself and against the lines before it
/// (the header, `t` never decreasing); that subscribers exist is the replayer's check.
public struct EventLogParser: Sendable {
    /// The name of the log, for error messages.
    public let file: String
    /// The header, once it has been read.
    public private(set) var header: JSONObject?
    private var lastT: LogTime?

    /// A parser for the log named `file`; the first line it parses that is not blank or
    /// a comment must be the header.
    public init(file: String) { self.file = file }

    /// Parses one line: `nil` for a blank line, a comment, or the header.
    ///
    /// - Parameters:
    ///   - line: the line, without its newline (a trailing carriage return is ignored).
    ///   - number: its 1-based line number, for the entry and for errors.
    /// - Throws: ``EventLogError`` naming the file, the line and what is wrong.
    public mutating func parse(line: Substring, number: Int) throws(EventLogError) -> LogEntry? {
        var line = line
        if line.last == "\r" { line = line.dropLast() }
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        if trimmed.isEmpty || trimmed.first == "#" { return nil }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: String(line))
        } catch {
            throw fail(number, "not valid JSON: \(error)")
        }
        guard case .object(let object) = json else {
            throw fail(number, "expected a JSON object, found \(Self.describe(json))")
        }
        guard header != nil else {
            try checkHeader(object, number)
            header = object
            return nil
        }
        let entry = LogEntry(t: try time(object, number), record: try record(object, number), line: number)
        lastT = entry.t
        return entry
    }

    private func fail(_ line: Int, _ message: String) -> EventLogError {
        EventLogError(file: file, line: line, message: message)
    }

    private func checkHeader(_ object: JSONObject, _ line: Int) throws(EventLogError) {
        guard object["format"] == .string(EventLog.formatName) else {
            if let format = object["format"] {
                throw fail(line, "not a NotifyBus log: header \"format\" is \(format.jsonText), expected \"\(EventLog.formatName)\"")
            }
            throw fail(line, "not a NotifyBus log: the first line must be a header like {\"format\": \"notifybus-log\", \"version\": 1}")
        }
        guard let version = object["version"] else { throw fail(line, "the header has no \"version\"") }
        guard version == .integer(Int64(EventLog.version)) else {
            throw fail(line, "unsupported log version \(version.jsonText) (this reader supports version \(EventLog.version))")
        }
    }

    private func time(_ object: JSONObject, _ line: Int) throws(EventLogError) -> LogTime {
        guard let value = object["t"] else { throw fail(line, "record has no \"t\"") }
        guard let t = LogTime(json: value) else {
            throw fail(
                line,
                "\"t\" must be a non-negative number of seconds (at most \(Int64(LogTime.maximumSeconds))), found \(value.jsonText)")
        }
        if let lastT, t < lastT {
            throw fail(line, "\"t\" goes back in time: \(t) is less than the previous record's \(lastT)")
        }
        return t
    }

    private func record(_ object: JSONObject, _ line: Int) throws(EventLogError) -> LogRecord {
        guard let typeValue = object["type"] else { throw fail(line, "record has no \"type\"") }
        guard case .string(let type) = typeValue else {
            throw fail(line, "\"type\" must be a string, found \(Self.describe(typeValue))")
        }
        switch type {
        case "event":
            let key = try requiredString(object, "key", line)
            guard !key.isEmpty else { throw fail(line, "\"key\" must not be empty") }
            guard let value = object["value"] else { throw fail(line, "event has no \"value\"") }
            return .event(key: key, value: value, source: try string(object, "source", line, required: false))
        case "subscribe":
            let name = try subscriberName(object, line, required: true)
            var record = SubscribeRecord(subscriber: name)
            if let match = object["match"] {
                guard case .array(let items) = match else {
                    throw fail(line, "\"match\" must be an array of patterns, found \(Self.describe(match))")
                }
                record.match = []
                for item in items {
                    guard case .string(let pattern) = item else {
                        throw fail(line, "\"match\" must hold only strings, found \(Self.describe(item))")
                    }
                    record.match.append(KeyPattern(pattern))
                }
            }
            if let policy = object["policy"] {
                guard case .string(let name) = policy, let p = DeliveryPolicy(rawValue: name) else {
                    throw fail(line, "\"policy\" must be one of \"latest\", \"changed\", \"all\", \"drop\", found \(policy.jsonText)")
                }
                record.policy = p
            }
            if let limit = object["limit"] {
                guard let d = limit.doubleValue, d >= 0, d <= Double(Int32.max), let n = Int(exactly: d) else {
                    throw fail(line, "\"limit\" must be a non-negative whole number, found \(limit.jsonText)")
                }
                record.limit = n
            }
            if let initial = object["initial"] {
                guard initial == "current" else {
                    throw fail(line, "\"initial\" can only be \"current\", found \(initial.jsonText)")
                }
                record.initial = .current
            }
            return .subscribe(record)
        case "suspend":
            return .suspend(subscriber: try subscriberName(object, line, required: false))
        case "resume":
            return .resume(subscriber: try subscriberName(object, line, required: false))
        case "unsubscribe":
            return .unsubscribe(subscriber: try subscriberName(object, line, required: true))
        default:
            throw fail(line, "unknown record type \"\(type)\" (expected event, subscribe, suspend, resume or unsubscribe)")
        }
    }

    private func subscriberName(_ object: JSONObject, _ line: Int, required: Bool) throws(EventLogError) -> String {
        let name = required
            ? try requiredString(object, "subscriber", line)
            : try string(object, "subscriber", line, required: false) ?? "default"
        guard !name.isEmpty else { throw fail(line, "\"subscriber\" must not be empty") }
        return name
    }

    private func string(_ object: JSONObject, _ field: String, _ line: Int, required: Bool) throws(EventLogError) -> String? {
        guard let value = object[field] else {
            if required { throw fail(line, "record has no \"\(field)\"") }
            return nil
        }
        guard case .string(let s) = value else {
            throw fail(line, "\"\(field)\" must be a string, found \(Self.describe(value))")
        }
        return s
    }

    private func requiredString(_ object: JSONObject, _ field: String, _ line: Int) throws(EventLogError) -> String {
        guard let value = object[field] else { throw fail(line, "record has no \"\(field)\"") }
        guard case .string(let s) = value else {
            throw fail(line, "\"\(field)\" must be a string, found \(Self.describe(value))")
        }
        return s
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean (\(value.jsonText))"
        case .integer, .number, .decimal: "a number (\(value.jsonText))"
        case .string: "a string (\(value.jsonText))"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
