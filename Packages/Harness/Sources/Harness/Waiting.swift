import Synchronization

/// How long to wait for something that should happen (generous: CI machines are slow).
public let patience: Duration = .seconds(10)

/// Values recorded from callbacks on any thread, read by a test.
public final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    public init() {}

    public func append(_ item: Element) { items.withLock { $0.append(item) } }

    public var all: [Element] { items.withLock { $0 } }

    public var count: Int { items.withLock { $0.count } }

    public func removeAll() { items.withLock { $0.removeAll() } }

    /// Waits until `predicate` holds for everything recorded so far (polling); returns whether it did.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10), until predicate: ([Element]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if predicate(all) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Waits until `condition` holds (polling every 10 ms); returns whether it did within `timeout`.
@discardableResult
public func eventually(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}
