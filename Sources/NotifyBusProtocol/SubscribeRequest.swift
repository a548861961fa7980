package import DBus
package import NotifyBus

/// What a `Subscribe` call asks for: its patterns and options, checked once.
package struct SubscribeRequest: Sendable, Hashable {
    /// The key patterns; an empty list asks for every key (`**`).
    package var patterns: [KeyPattern]
    /// What a resume delivers.
    package var policy: DeliveryPolicy
    /// The most entries held while suspended.
    package var limit: Int
    /// Whether the current values come first.
    package var initial: InitialDelivery
    /// Whether the subscription is suspended while its owner's process is frozen or stopped.
    package var followsFreezer: Bool

    /// A request; the defaults are the daemon's.
    package init(
        patterns: [KeyPattern] = [.all], policy: DeliveryPolicy = .latest, limit: Int = NotificationBus.defaultLimit,
        initial: InitialDelivery = .none, followsFreezer: Bool = true
    ) {
        self.patterns = patterns
        self.policy = policy
        self.limit = limit
        self.initial = initial
        self.followsFreezer = followsFreezer
    }

    /// Why a call's arguments were refused.
    package enum Refusal: Error, Sendable, Hashable {
        /// An unknown option, an option of the wrong type or an invalid value (`InvalidArgs`).
        case invalidArgs(String)
        /// A bound of the daemon passed: too many patterns, a pattern too long, too many
        /// subscriptions (`LimitsExceeded`).
        case limitsExceeded(String)
        /// The daemon could not serve the call (`Failed`).
        case failed(String)

        /// The D-Bus error to answer with.
        package var error: DBusError {
            switch self {
            case .invalidArgs(let message): DBusError(name: DBusError.Name.invalidArgs, message: message)
            case .limitsExceeded(let message): DBusError(name: BusInterface.ErrorName.limitsExceeded, message: message)
            case .failed(let message): DBusError(name: DBusError.Name.failed, message: message)
            }
        }
    }

    /// Reads the arguments of `Subscribe(as patterns, a{sv} options)`.
    /// - Throws: `Refusal` naming what is wrong.
    package init(arguments: [DBusValue]) throws(Refusal) {
        guard arguments.count == 2, case .array("s", let patternValues) = arguments[0],
              case .dictionary("s", "v", let entries) = arguments[1]
        else {
            throw .invalidArgs("Subscribe takes (as patterns, a{sv} options)")
        }
        self.init(patterns: try Self.patterns(patternValues, of: "Subscribe"))
        var seen = Set<String>()
        for entry in entries {
            guard case .string(let name) = entry.key, case .variant(let value) = entry.value else { continue }
            guard seen.insert(name).inserted else { throw .invalidArgs("option '\(name)' is given twice") }
            try apply(option: name, value)
        }
    }

    /// The patterns of an `as` argument (of `Subscribe` or `Snapshot`, named by `member`); `**`
    /// for none.
    /// - Throws: `Refusal`: `limitsExceeded` past 64 patterns or 1024 bytes in one, `invalidArgs`
    ///   for a pattern with an empty segment (`a//b`, a leading or trailing `/`, the empty pattern).
    package static func patterns(_ values: [DBusValue], of member: String) throws(Refusal) -> [KeyPattern] {
        guard values.count <= BusInterface.Limits.patternsPerSubscription else {
            throw .limitsExceeded(
                "\(values.count) patterns: \(member) takes at most \(BusInterface.Limits.patternsPerSubscription)")
        }
        var patterns: [KeyPattern] = []
        for value in values {
            guard let text = value.stringValue else { throw .invalidArgs("\(member) takes patterns as strings") }
            guard text.utf8.count <= BusInterface.Limits.patternBytes else {
                throw .limitsExceeded(
                    "a pattern of \(text.utf8.count) bytes: at most \(BusInterface.Limits.patternBytes) are allowed")
            }
            if let problem = KeyPattern.emptySegmentProblem(in: text) { throw .invalidArgs(problem) }
            patterns.append(KeyPattern(text))
        }
        return patterns.isEmpty ? [.all] : patterns
    }

    private mutating func apply(option name: String, _ value: DBusValue) throws(Refusal) {
        switch (name, value) {
        case ("policy", .string(let text)):
            guard let policy = DeliveryPolicy(rawValue: text) else {
                throw .invalidArgs("option 'policy' must be latest, changed, all or drop, not '\(text)'")
            }
            self.policy = policy
        case ("limit", .uint32(let number)):
            guard number >= 1, number <= UInt32(BusInterface.Limits.maximumLimit) else {
                throw .invalidArgs("option 'limit' must be 1 to \(BusInterface.Limits.maximumLimit), not \(number)")
            }
            limit = Int(number)
        case ("initial", .string(let text)):
            switch text {
            case "current": initial = .current
            case "none": initial = .none
            default: throw .invalidArgs("option 'initial' must be 'current' or 'none', not '\(text)'")
            }
        case ("follow-freezer", .boolean(let follows)):
            followsFreezer = follows
        case ("policy", _), ("initial", _):
            throw .invalidArgs("option '\(name)' must be a string (s), not '\(value.signature)'")
        case ("limit", _):
            throw .invalidArgs("option 'limit' must be an unsigned 32-bit integer (u), not '\(value.signature)'")
        case ("follow-freezer", _):
            throw .invalidArgs("option 'follow-freezer' must be a boolean (b), not '\(value.signature)'")
        default:
            throw .invalidArgs("unknown option '\(name)'")
        }
    }

    /// The arguments of the `Subscribe` call that asks for this.
    package var arguments: [DBusValue] {
        var options: [(String, DBusValue)] = [
            ("policy", .string(policy.rawValue)),
            ("initial", .string(initial == .current ? "current" : "none")),
            ("follow-freezer", .boolean(followsFreezer)),
        ]
        // Always sent: one out of 1…maximumLimit (clamped to a `u`) is the daemon's to refuse.
        options.append(("limit", .uint32(UInt32(clamping: limit))))
        return [.strings(patterns.map(\.text)), .vardict(options)]
    }
}
