package import Mosquitto
package import NotifyBus
package import SourceFramework
package import DequeModule
package import OrderedCollections

/// The MQTT link's logic as a plain state machine: events in, actions out, no I/O (the driver,
/// `MQTTLink`, carries the actions out on the loop).
///
/// The link is one more subscriber of the bus, suspended while the broker cannot be reached
/// (specification: Publishing a fleet to MQTT). It keeps, per key, the message that is owed to
/// the broker (`unsent`): the initial values, what the resume after an outage flushes, and every
/// publish that was not acknowledged when a connection dropped; they leave first, one per key, in
/// the order of each key's latest event. Connected, live events leave one by one in publish order
/// (`live`), at most `window` unacknowledged; the link takes more from the bus only when those are
/// gone, so a broker slower than the bus leaves the backlog in the bus, which collapses it per key
/// past its high-water mark as for any subscriber that falls behind. The first message of each key
/// is a current value (`coalesced` 0): the first connection's, and a key's first value whenever
/// its source publishes it.
public struct MQTTLinkState: Sendable {
    /// One retained message owed for a key: its latest value, the bus time of the latest event
    /// it stands for, and how many events it stands for.
    package struct Message: Sendable, Hashable {
        /// The key.
        package var key: String
        /// Its latest value.
        package var value: JSONValue
        /// The bus time of the latest event it stands for.
        package var time: Duration
        /// How many events it stands for (0: a current value, sent without an event).
        package var coalesced: Int

        /// A message.
        package init(key: String, value: JSONValue, time: Duration, coalesced: Int) {
            self.key = key
            self.value = value
            self.time = time
            self.coalesced = coalesced
        }
    }

    /// Where the connection is.
    public enum Phase: Sendable, Hashable {
        /// Not started yet.
        case idle
        /// A connection attempt is under way.
        case connecting
        /// Connected: notifications are published as they come.
        case connected
        /// Waiting to try again.
        case waiting
        /// Stopping: `$online` false is on its way, then DISCONNECT.
        case stopping
        /// Stopped for good.
        case stopped
    }

    /// What happened.
    package enum Event: Sendable, Hashable {
        /// Start the link.
        case start
        /// The broker accepted the connection.
        case connected(sessionPresent: Bool)
        /// The attempt failed, the broker refused it, or the connection dropped; `random` is a
        /// number in 0..<1 that sets the jitter of the next delay.
        case connectionLost(reason: String, random: Double)
        /// The broker refused the attempt's protocol version: MQTT 5 is followed at once by an
        /// attempt in 3.1.1; a refusal of 3.1.1 is a `connectionLost`.
        case versionRefused(reason: String, random: Double)
        /// The bus has events ready for the subscription.
        case ready
        /// The subscription's events (initial values, a resume's flush, live events, resync values).
        case notifications([SubscriptionEvent])
        /// `message` went out as publish `messageID`.
        case sent(Message, messageID: Int32)
        /// `message` could not be handed to the connection at all (it is owed again).
        case notSent(Message)
        /// `message` will never be published (its topic or payload cannot be): it is not owed.
        case dropped(Message)
        /// The broker acknowledged publish `messageID`.
        case acknowledged(messageID: Int32)
        /// The delay before the next attempt is over.
        case retryDue
        /// Stop the link (clean exit).
        case stop
        /// Stopping took too long: give up waiting for the broker.
        case stopTimedOut
    }

    /// What to do, in order.
    package enum Action: Sendable, Hashable {
        /// Make a new client and connect it, speaking this version.
        case connect(MosquittoConfiguration.ProtocolVersion)
        /// Publish `$online` with this value (retained, QoS 1).
        case publishOnline(Bool)
        /// Publish this message (retained, QoS 1).
        case publish(Message)
        /// Take what the subscription has ready and hand it to `.notifications`.
        case poll
        /// Suspend the bus subscription (the broker went away).
        case suspend
        /// Resume it, with every current value as well when `resync` (the broker lost the
        /// session), and hand what it has ready to `.notifications`: the owed messages leave.
        case resume(resync: Bool)
        /// Try again after this delay.
        case scheduleRetry(Duration)
        /// Report this status as the `mqtt` source.
        case status(SourceStatus)
        /// Send DISCONNECT (after `$online` false was acknowledged).
        case disconnect
        /// Close and forget the current client.
        case closeClient
        /// The link has stopped.
        case finished
    }

    /// The first delay between attempts.
    package static let firstDelay = Duration.seconds(1)
    /// The longest delay between attempts.
    package static let longestDelay = Duration.seconds(60)
    /// How far each delay may be off, up or down (a fraction of it).
    package static let jitter = 0.2
    /// The most publishes handed to the connection and not acknowledged yet (libmosquitto's
    /// default in-flight limit).
    package static let window = 20

    /// Where the connection is.
    package private(set) var phase = Phase.idle
    /// The protocol version of the attempts: MQTT 5 until a broker refuses it, then 3.1.1.
    package private(set) var protocolVersion = MosquittoConfiguration.ProtocolVersion.v5
    /// Messages owed to the broker, in the order they will leave.
    package private(set) var unsent: OrderedDictionary<String, Message> = [:]
    /// Live events taken from the bus and not handed to the connection yet, in publish order.
    package private(set) var live: Deque<Message> = []
    /// Publishes not acknowledged yet, in the order they left.
    package private(set) var inflight: OrderedDictionary<Int32, Message> = [:]
    /// Failed attempts since the last connection.
    package private(set) var failures = 0
    /// Whether a connection has ever been made.
    package private(set) var hasConnected = false
    /// The message ID of `$online` false while stopping.
    private var offlineMessageID: Int32?
    /// Whether the bus subscription is resumed.
    private var subscriptionActive = false
    /// Publish actions returned whose `.sent`, `.notSent` or `.dropped` has not come yet.
    private var handingOver = 0
    /// Whether the next notifications are the first connection's: current values, sent with
    /// `coalesced` 0 whatever happened before it.
    private var firstFlush = false
    /// Whether the bus said it has events that have not been taken yet.
    private var readyWaiting = false
    /// The keys the link has taken a notification of: the first message of any other key is its
    /// current value (`coalesced` 0), whichever came first, the broker or the key's source.
    private var keysTaken: Set<String> = []

    /// A link that has not started.
    package init() {}

    /// The delay before attempt `failures + 1`: 1 s doubling to 60 s, ±20 % by `random`.
    package static func delay(afterFailures failures: Int, random: Double) -> Duration {
        let base = min(64.0, Double(1 << min(max(failures - 1, 0), 6)))
        let capped = min(base, 60.0)
        let factor = 1.0 + jitter * (2.0 * min(max(random, 0.0), 1.0) - 1.0)
        return .milliseconds(Int64((capped * factor * 1000).rounded()))
    }

    /// Handles `event`; returns what to do.
    package mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start:
            guard phase == .idle else { return [] }
            phase = .connecting
            return [.connect(protocolVersion)]

        case .connected(let sessionPresent):
            guard phase == .connecting else { return [] }
            phase = .connected
            failures = 0
            let lostSession = hasConnected && !sessionPresent
            firstFlush = !hasConnected
            hasConnected = true
            readyWaiting = false  // the resume takes what is ready
            subscriptionActive = true
            // `$online` first; then what the resume flushes (and every value, when the broker
            // lost the session) joins what is owed, and all of it leaves (`.notifications`).
            return [.status(.running), .publishOnline(true), .resume(resync: lostSession)]

        case .connectionLost(let reason, let random):
            switch phase {
            case .connecting, .connected:
                var actions: [Action] = [.closeClient]
                owe(inflight.values)
                owe(live)
                inflight = [:]
                live = []
                handingOver = 0
                if subscriptionActive {
                    subscriptionActive = false
                    actions.append(.suspend)
                }
                failures += 1
                phase = .waiting
                actions.append(.status(.unavailable(reason: reason)))
                actions.append(.scheduleRetry(Self.delay(afterFailures: failures, random: random)))
                return actions
            case .stopping:
                phase = .stopped
                return [.closeClient, .finished]
            case .idle, .waiting, .stopped:
                return []
            }

        case .versionRefused(let reason, let random):
            guard phase == .connecting, let older = protocolVersion.older else {
                return handle(.connectionLost(reason: reason, random: random))
            }
            protocolVersion = older
            return [.closeClient, .connect(older)]

        case .ready:
            readyWaiting = true
            return phase == .connected ? drain() : []

        case .notifications(let events):
            for event in events {
                guard case .notification(let notification) = event else { continue }
                // A key's first message stands for its current value, not for a change: a source's
                // first value of a key after the link started goes with `coalesced` 0, live or
                // after an outage, as the current values of the first connection do.
                let isFirst = keysTaken.insert(notification.key).inserted
                let message = Message(
                    key: notification.key, value: notification.value, time: notification.lastEventTime,
                    coalesced: isFirst ? 0 : notification.coalesced)
                // Connected, events leave as the bus delivers them; anything else (initial values,
                // a flush, a resync's values) is owed, one per key.
                if phase == .connected, notification.kind == .live || notification.kind == .collapsed {
                    live.append(message)
                } else {
                    owe([message])
                }
            }
            if firstFlush, phase == .connected {
                // Until the first connection and on it, the current values (specification:
                // Publishing a fleet to MQTT).
                firstFlush = false
                for key in unsent.keys { unsent[key]?.coalesced = 0 }
            }
            return phase == .connected ? drain() : []

        case .sent(let message, let messageID):
            handingOver = max(0, handingOver - 1)
            if phase == .connected || phase == .stopping { inflight[messageID] = message } else { owe([message]) }
            return []

        case .notSent(let message):
            handingOver = max(0, handingOver - 1)
            owe([message])
            return []

        case .dropped:
            handingOver = max(0, handingOver - 1)
            return phase == .connected ? drain() : []

        case .acknowledged(let messageID):
            inflight.removeValue(forKey: messageID)
            if phase == .stopping, messageID == offlineMessageID {
                offlineMessageID = nil
                return [.disconnect]
            }
            return phase == .connected ? drain() : []

        case .retryDue:
            guard phase == .waiting else { return [] }
            phase = .connecting
            return [.connect(protocolVersion)]

        case .stop:
            switch phase {
            case .connected:
                // What is owed goes first, whatever the window: `$online` false is acknowledged
                // after it, and the stop waits for that.
                phase = .stopping
                return drain(all: true) + [.publishOnline(false)]
            case .stopping, .stopped:
                return []
            case .idle, .connecting, .waiting:
                phase = .stopped
                return [.closeClient, .finished]
            }

        case .stopTimedOut:
            guard phase == .stopping else { return [] }
            phase = .stopped
            return [.closeClient, .finished]
        }
    }

    /// Records the message ID of `$online` false, so that its acknowledgement ends the stop.
    package mutating func offlineSent(messageID: Int32) {
        if phase == .stopping { offlineMessageID = messageID }
    }

    /// The messages owed, then the live ones, as publish actions: as many as the window has room
    /// for (or `all`). With room to spare and nothing left, a poll of what the bus has ready.
    private mutating func drain(all: Bool = false) -> [Action] {
        var room = all ? Int.max : max(0, Self.window - inflight.count - handingOver)
        var actions: [Action] = []
        while room > 0 {
            guard let message = unsent.isEmpty ? live.popFirst() : unsent.removeFirst().value else { break }
            actions.append(.publish(message))
            handingOver += 1
            room -= 1
        }
        if !all, room > 0, readyWaiting, unsent.isEmpty, live.isEmpty {
            readyWaiting = false
            actions.append(.poll)
        }
        return actions
    }

    /// Adds `messages` to what is owed, kept in the order of each key's latest event: a key
    /// already owed adds the count and keeps the later of the two values (with its time and
    /// place). A new notification is the latest and goes last; a publish owed again (not
    /// acknowledged, not sent) may be older than what waits for its key, and is placed by its time.
    private mutating func owe(_ messages: some Sequence<Message>) {
        for message in messages {
            var merged = message
            if let earlier = unsent[message.key] {
                if earlier.time > message.time {
                    unsent[message.key]?.coalesced += message.coalesced
                    continue
                }
                merged.coalesced += earlier.coalesced
                unsent.removeValue(forKey: message.key)
            }
            // After the last message whose time is not later (usually the end).
            var index = unsent.count
            while index > 0, unsent.values[index - 1].time > merged.time { index -= 1 }
            unsent.updateValue(merged, forKey: merged.key, insertingAt: index)
        }
    }
}
