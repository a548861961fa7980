import DBus
import NotifyBus
import NotifyBusProtocol

/// Who owns which subscription, within which bounds, and why each one is suspended: the daemon's
/// protocol logic as a plain state whose events return actions, which `BusService` carries out.
///
/// - **Owners.** A connection's first `Subscribe` makes it an owner, whose process (and so its
///   application) is not known yet: its calls wait (at most `Bounds.waitingPerOwner`) while
///   `identify` asks the bus; once `identified`, it is followed and its calls are admitted in
///   order. An owner without subscriptions (nor calls waiting) is forgotten.
/// - **Bounds.** A subscription is refused (`LimitsExceeded`) past the subscriptions of one
///   connection, of one application, or of all, or past the pattern bytes of all, which count
///   the patterns of the calls waiting too.
/// - **Suspension.** A subscription is suspended while its owner asked for it (`Suspend`) or,
///   when it follows the owner's life, while the owner's process cannot run (frozen or stopped);
///   it is resumed when neither holds any more. So an explicit `Suspend` outlasts a thaw, and a
///   thaw does not resume what the owner suspended. A suspension for the owner's life keeps the
///   events not yet sent (`holdingPending`): the event that reveals a stop is held, not sent.
struct SubscriptionTable {
    /// The bounds a table keeps.
    struct Bounds: Equatable {
        var perConnection = BusInterface.Limits.subscriptionsPerConnection
        var perApplication = BusInterface.Limits.subscriptionsPerApplication
        var inAll = BusInterface.Limits.defaultMaximumSubscriptions
        var patternBytesInAll = BusInterface.Limits.patternBytesInAll
        /// `Subscribe` calls of one owner waiting for it to be identified.
        var waitingPerOwner = BusInterface.Limits.subscriptionsPerConnection
    }

    /// What is known of an owner's process.
    struct Identity: Equatable {
        let process: ProcessIdentity
        /// Its cgroup v2 group, when known.
        let group: String?
        var application: ApplicationID { ApplicationID(process: process, group: group) }
    }

    struct Entry: Equatable {
        let owner: BusName
        let followsLife: Bool
        let patternBytes: Int
        var suspendedByCall = false
        var suspendedByLife = false
        var isSuspended: Bool { suspendedByCall || suspendedByLife }
    }

    /// A `Subscribe` call waiting for its owner to be identified.
    struct Waiting: Equatable {
        let call: UInt64
        let request: SubscribeRequest
    }

    struct Owner: Equatable {
        /// Its process, once identified.
        var identity: Identity?
        /// Calls waiting for the identity, in order.
        var waiting: [Waiting] = []
        /// Its subscriptions, in the order they were made.
        var subscriptions: [UInt64] = []
        /// Whether its process can run, as last reported.
        var canRun = true
    }

    enum Action: Equatable {
        /// Ask the bus which process the owner is; answer with `identified(_:_:)`.
        case identify(BusName)
        /// Follow the owner: its leaving the bus and its process's life; then carry out `admit`.
        case follow(BusName, Identity)
        /// Stop following the owner.
        case forget(BusName)
        /// Make subscription `n` for `request` (on the bus, and its object) and answer `call`.
        case create(UInt64, SubscribeRequest, call: UInt64)
        /// Answer `call` with `refusal`.
        case refuse(call: UInt64, SubscribeRequest.Refusal)
        /// Suspend it on the bus; `holdingPending`: the events not sent yet are held too.
        case suspend(UInt64, holdingPending: Bool)
        /// Resume it on the bus.
        case resume(UInt64)
        /// Cancel it on the bus and take its object away.
        case remove(UInt64)
    }

    let bounds: Bounds
    private(set) var entries: [UInt64: Entry] = [:]
    private(set) var owners: [BusName: Owner] = [:]
    /// Subscriptions per application.
    private(set) var applications: [ApplicationID: Int] = [:]
    private(set) var patternBytes = 0
    /// Bytes of the patterns of the calls waiting for their owners to be identified.
    private(set) var waitingPatternBytes = 0
    private var nextNumber: UInt64 = 1

    init(bounds: Bounds = Bounds()) {
        self.bounds = bounds
    }

    // MARK: Subscribing

    /// `Subscribe` from `owner`, as `call`: made at once when the owner is known, else after it
    /// is identified.
    mutating func subscribe(owner: BusName, call: UInt64, request: SubscribeRequest) -> [Action] {
        if let record = owners[owner], record.identity != nil { return make(owner: owner, call: call, request: request) }
        let bytes = Self.patternBytes(of: request)
        if owners[owner]?.waiting.count ?? 0 >= bounds.waitingPerOwner {
            return [.refuse(call: call, .limitsExceeded(
                "more than \(bounds.waitingPerOwner) Subscribe calls are waiting for this connection's process to be known"))]
        }
        if patternBytes + waitingPatternBytes + bytes > bounds.patternBytesInAll {
            return [.refuse(call: call, .limitsExceeded(
                "the subscriptions' patterns would pass \(bounds.patternBytesInAll) bytes in all"))]
        }
        waitingPatternBytes += bytes
        guard var record = owners[owner] else {
            owners[owner] = Owner(waiting: [Waiting(call: call, request: request)])
            return [.identify(owner)]
        }
        record.waiting.append(Waiting(call: call, request: request))
        owners[owner] = record
        return []
    }

    /// The bus said which process `owner` is (`nil`: it could not, the owner is gone).
    mutating func identified(_ owner: BusName, _ identity: Identity?) -> [Action] {
        guard var record = owners[owner], record.identity == nil else { return [] }
        guard let identity else {
            owners[owner] = nil
            releaseWaiting(record.waiting)
            return record.waiting.map { .refuse(call: $0.call, .failed("the calling connection's process is not known")) }
        }
        record.identity = identity
        owners[owner] = record
        return [.follow(owner, identity)]
    }

    /// Makes the subscriptions whose calls waited for `owner`'s identity (after following it, so
    /// that a process that is already frozen has them start suspended).
    mutating func admit(_ owner: BusName) -> [Action] {
        guard let record = owners[owner], record.identity != nil, !record.waiting.isEmpty else { return [] }
        let waiting = record.waiting
        owners[owner]?.waiting = []
        releaseWaiting(waiting)
        var actions: [Action] = []
        for call in waiting { actions += make(owner: owner, call: call.call, request: call.request) }
        return actions
    }

    private mutating func make(owner: BusName, call: UInt64, request: SubscribeRequest) -> [Action] {
        guard var record = owners[owner], let application = record.identity?.application else { return [] }
        let bytes = Self.patternBytes(of: request)
        let refusal: String? =
            if record.subscriptions.count >= bounds.perConnection {
                "a connection may hold at most \(bounds.perConnection) subscriptions"
            } else if applications[application, default: 0] >= bounds.perApplication {
                "an application (\(application)) may hold at most \(bounds.perApplication) subscriptions"
            } else if entries.count >= bounds.inAll {
                "the daemon holds \(bounds.inAll) subscriptions, its most"
            } else if patternBytes + waitingPatternBytes + bytes > bounds.patternBytesInAll {
                "the subscriptions' patterns would pass \(bounds.patternBytesInAll) bytes in all"
            } else {
                nil
            }
        if let refusal {
            return record.subscriptions.isEmpty && record.waiting.isEmpty
                ? [.refuse(call: call, .limitsExceeded(refusal))] + drop(owner)
                : [.refuse(call: call, .limitsExceeded(refusal))]
        }
        let number = nextNumber
        nextNumber += 1
        var entry = Entry(owner: owner, followsLife: request.followsFreezer, patternBytes: bytes)
        var actions: [Action] = [.create(number, request, call: call)]
        if entry.followsLife, !record.canRun {
            entry.suspendedByLife = true
            actions.append(.suspend(number, holdingPending: true))
        }
        record.subscriptions.append(number)
        owners[owner] = record
        entries[number] = entry
        applications[application, default: 0] += 1
        patternBytes += bytes
        return actions
    }

    // MARK: The owner's calls

    /// `Suspend` from the owner.
    mutating func suspend(_ number: UInt64) -> [Action] {
        update(number, holdingPending: false) { $0.suspendedByCall = true }
    }

    /// `Resume` from the owner: resumed unless its process cannot run.
    mutating func resume(_ number: UInt64) -> [Action] {
        update(number, holdingPending: false) { $0.suspendedByCall = false }
    }

    /// `Cancel` from the owner.
    mutating func cancel(_ number: UInt64) -> [Action] {
        guard let entry = entries.removeValue(forKey: number) else { return [] }
        release(entry)
        owners[entry.owner]?.subscriptions.removeAll { $0 == number }
        guard let record = owners[entry.owner], record.subscriptions.isEmpty, record.waiting.isEmpty else {
            return [.remove(number)]
        }
        return [.remove(number)] + drop(entry.owner)
    }

    // MARK: The owner's life

    /// The owner left the bus: every subscription of its goes, and its waiting calls with it.
    mutating func ownerLeft(_ owner: BusName) -> [Action] {
        guard let record = owners[owner] else { return [] }
        releaseWaiting(record.waiting)
        var actions: [Action] = record.waiting.map { .refuse(call: $0.call, .failed("the calling connection left the bus")) }
        for number in record.subscriptions {
            if let entry = entries.removeValue(forKey: number) { release(entry) }
            actions.append(.remove(number))
        }
        return actions + drop(owner)
    }

    /// The owner's process can run again, or no longer can (frozen or stopped).
    mutating func ownerLife(_ owner: BusName, canRun: Bool) -> [Action] {
        guard var record = owners[owner], record.canRun != canRun else { return [] }
        record.canRun = canRun
        owners[owner] = record
        var actions: [Action] = []
        for number in record.subscriptions where entries[number]?.followsLife == true {
            actions += update(number, holdingPending: true) { $0.suspendedByLife = !canRun }
        }
        return actions
    }

    // MARK: Bookkeeping

    /// Forgets `owner`; `forget` when it was followed.
    private mutating func drop(_ owner: BusName) -> [Action] {
        guard let record = owners.removeValue(forKey: owner) else { return [] }
        return record.identity == nil ? [] : [.forget(owner)]
    }

    private static func patternBytes(of request: SubscribeRequest) -> Int {
        request.patterns.reduce(0) { $0 + $1.text.utf8.count }
    }

    private mutating func releaseWaiting(_ waiting: [Waiting]) {
        waitingPatternBytes -= waiting.reduce(0) { $0 + Self.patternBytes(of: $1.request) }
    }

    private mutating func release(_ entry: Entry) {
        patternBytes -= entry.patternBytes
        guard let application = owners[entry.owner]?.identity?.application else { return }
        let left = applications[application, default: 1] - 1
        applications[application] = left > 0 ? left : nil
    }

    /// Applies `change` to subscription `number`; a suspend or resume when that changes whether it is suspended.
    private mutating func update(_ number: UInt64, holdingPending: Bool, _ change: (inout Entry) -> Void) -> [Action] {
        guard var entry = entries[number] else { return [] }
        let was = entry.isSuspended
        change(&entry)
        entries[number] = entry
        if entry.isSuspended == was { return [] }
        return [entry.isSuspended ? .suspend(number, holdingPending: holdingPending) : .resume(number)]
    }
}
