package import EpollLoop
import Synchronization

/// The thread that sources keep their system objects on (libudev handles, D-Bus connections),
/// shared by the sources given the same loop.
///
/// Two kinds:
/// - `SourceLoop(name:)` starts its thread at once and keeps it until `shutdown()`: the caller
///   owns it, and sources running on it leave it running when they stop.
/// - `SourceLoop.onDemand(name:)` starts its thread when the first source runs on it and stops it
///   when the last one returns; this is what a source without a loop uses, and what
///   `SystemSources.all(bus:options:)` shares between its sources.
public final class SourceLoop: Sendable {
    private enum Kind {
        case owned(EventLoopThread)
        case onDemand(name: String)
    }

    private struct OnDemand {
        var thread: EventLoopThread?
        var users = 0
    }

    private let kind: Kind
    private let onDemand = Mutex(OnDemand())

    /// Starts a loop thread named `name`, kept until `shutdown()`.
    /// - Throws: `SourceError.eventLoop` when the thread cannot start.
    public convenience init(name: String = "notifybus-sources") throws(SourceError) {
        do {
            self.init(thread: try EventLoopThread(name: name))
        } catch {
            throw SourceError.eventLoop(source: name, reason: "\(error)")
        }
    }

    /// A loop on an event-loop thread that the caller owns and stops.
    package init(thread: EventLoopThread) {
        kind = .owned(thread)
    }

    private init(onDemand name: String) {
        kind = .onDemand(name: name)
    }

    /// A loop that starts its thread when the first source runs on it and stops it when the last
    /// source's `run()` returns.
    public static func onDemand(name: String = "notifybus-sources") -> SourceLoop {
        SourceLoop(onDemand: name)
    }

    /// Whether the thread is running (a loop on demand runs only while a source does).
    public var isRunning: Bool {
        switch kind {
        case .owned(let thread): thread.isRunning
        case .onDemand: onDemand.withLock { $0.thread?.isRunning ?? false }
        }
    }

    /// Stops the thread of a loop made with `init(name:)`, after the jobs queued on it; a loop on
    /// demand stops by itself.
    public func shutdown() async {
        if case .owned(let thread) = kind { await thread.shutdown() }
    }

    /// The thread for one more running source; pair it with `release(_:)`.
    package func acquire() throws(EventLoopError) -> EventLoopThread {
        switch kind {
        case .owned(let thread):
            return thread
        case .onDemand(let name):
            return try onDemand.withLock { state throws(EventLoopError) -> EventLoopThread in
                let thread: EventLoopThread
                if let running = state.thread {
                    thread = running
                } else {
                    thread = try EventLoopThread(name: name)
                }
                state.thread = thread
                state.users += 1
                return thread
            }
        }
    }

    /// Ends the use begun by `acquire()`: the last user of a loop on demand stops its thread.
    package func release(_ thread: EventLoopThread) async {
        guard case .onDemand = kind else { return }
        let last = onDemand.withLock { state -> Bool in
            guard state.thread === thread else { return false }
            state.users -= 1
            guard state.users <= 0 else { return false }
            state.thread = nil
            state.users = 0
            return true
        }
        if last { await thread.shutdown() }
    }
}
