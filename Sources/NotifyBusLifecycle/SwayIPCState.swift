import NotifyBus

/// The sway window backend's logic as a plain state machine: messages in, actions out, no I/O
/// (the driver, `SwayToplevelWatcher`, carries the actions out on the loop).
///
/// It subscribes to window and workspace events and asks for the tree; each event asks for the
/// tree again, with at most one request in flight (a `focus` event of a known window is
/// reported at once, without waiting for the tree: a thaw on focus waits for no round trip): events that come while one is in flight ask
/// for one more once its reply is in. Each tree is reported when its windows differ from the
/// last report (the first always is). sway answers requests in order, so each reply must be of the
/// type of the oldest request not yet answered; anything else, a refused subscription or a tree
/// that cannot be read fails the connection.
struct SwayIPCState {
    /// What happened.
    enum Event: Equatable {
        /// The connection is up: subscribe and ask for the tree.
        case start
        /// A message came from sway.
        case received(SwayIPCMessage)
    }

    /// What to do.
    enum Action: Equatable {
        /// Send the message.
        case send(SwayIPCMessage)
        /// Report these windows (`ToplevelUpdate.windows`).
        case report([ToplevelWindow])
        /// Give the connection up (`ToplevelUpdate.lost`): nothing more is done.
        case fail(reason: String)
    }

    /// The types of the requests sent and not yet answered, oldest first.
    private var awaitedReplies: [UInt32] = []
    /// Whether a `GET_TREE` is in flight.
    private var treeRequested = false
    /// Whether an event came while it was.
    private var treeStale = false
    /// The windows last reported; `nil` before the first report.
    private(set) var reported: [ToplevelWindow]?
    /// Whether it failed (then every event is ignored).
    private(set) var hasFailed = false

    /// The subscription: window and workspace events.
    static let subscription = SwayIPCMessage(type: SwayIPCMessage.subscribe, payload: Array(#"["window","workspace"]"#.utf8))

    /// What to do about `event`.
    mutating func handle(_ event: Event) -> [Action] {
        guard !hasFailed else { return [] }
        switch event {
        case .start:
            awaitedReplies.append(SwayIPCMessage.subscribe)
            return [.send(Self.subscription), requestTree()]
        case .received(let message) where message.isEvent:
            guard message.type == SwayIPCMessage.windowEvent || message.type == SwayIPCMessage.workspaceEvent else { return [] }
            var actions: [Action] = []
            if message.type == SwayIPCMessage.windowEvent, let focused = SwayIPCTree.focusedWindow(inEvent: message.payload),
                var windows = reported, windows.contains(where: { $0.id == focused })
            {
                for index in windows.indices { windows[index].activated = windows[index].id == focused }
                if windows != reported {
                    reported = windows
                    actions.append(.report(windows))
                }
            }
            if treeRequested {
                treeStale = true
                return actions
            }
            return actions + [requestTree()]
        case .received(let message):
            guard awaitedReplies.first == message.type else {
                return fail("sway sent a reply of type \(message.type) to no request of that type")
            }
            awaitedReplies.removeFirst()
            return message.type == SwayIPCMessage.subscribe ? subscribed(message.payload) : treeArrived(message.payload)
        }
    }

    private mutating func subscribed(_ payload: [UInt8]) -> [Action] {
        guard (try? JSONValue(parsing: payload))?["success"]?.boolValue == true else {
            return fail("sway refused to subscribe to window and workspace events: \(String(decoding: payload.prefix(200), as: UTF8.self))")
        }
        return []
    }

    private mutating func treeArrived(_ payload: [UInt8]) -> [Action] {
        treeRequested = false
        let windows: [ToplevelWindow]
        do {
            windows = try SwayIPCTree.windows(inTree: payload)
        } catch {
            return fail(error.description)
        }
        var actions: [Action] = []
        if windows != reported {
            reported = windows
            actions.append(.report(windows))
        }
        if treeStale {
            treeStale = false
            actions.append(requestTree())
        }
        return actions
    }

    private mutating func requestTree() -> Action {
        treeRequested = true
        awaitedReplies.append(SwayIPCMessage.getTree)
        return .send(SwayIPCMessage(type: SwayIPCMessage.getTree))
    }

    private mutating func fail(_ reason: String) -> [Action] {
        hasFailed = true
        return [.fail(reason: reason)]
    }
}
