@testable import NotifyBusLifecycle
import Testing

/// The sway backend's logic, driven without a socket.
@Suite struct SwayIPCStateTests {
    static let getTree = SwayIPCMessage(type: SwayIPCMessage.getTree)
    static let subscribed = SwayIPCMessage(type: SwayIPCMessage.subscribe, payload: Array(#"{"success": true}"#.utf8))
    static let windowEvent = SwayIPCMessage(type: SwayIPCMessage.windowEvent, payload: Array(#"{"change": "focus"}"#.utf8))
    static let workspaceEvent = SwayIPCMessage(type: SwayIPCMessage.workspaceEvent, payload: Array(#"{"change": "focus"}"#.utf8))

    /// A tree reply with one view per entry: (container id, app id, focused).
    static func tree(_ views: [(UInt64, String?, Bool)]) -> SwayIPCMessage {
        let nodes = views.map { id, appID, focused in
            #"{"id": \#(id), "type": "con", "pid": \#(1000 + id), "app_id": \#(appID.map { "\"\($0)\"" } ?? "null"), "focused": \#(focused), "nodes": []}"#
        }
        let payload = #"{"id": 1, "type": "root", "nodes": [{"id": 3, "type": "workspace", "nodes": [\#(nodes.joined(separator: ","))]}]}"#
        return SwayIPCMessage(type: SwayIPCMessage.getTree, payload: Array(payload.utf8))
    }

    @Test func subscribesAsksForTheTreeAndReportsIt() {
        var state = SwayIPCState()
        #expect(state.handle(.start) == [.send(SwayIPCState.subscription), .send(Self.getTree)])
        #expect(state.handle(.received(Self.subscribed)) == [])
        #expect(state.handle(.received(Self.tree([(5, "a", true)]))) == [
            .report([ToplevelWindow(id: 5, appID: "a", pid: 1005, activated: true)])
        ])
    }

    @Test func eventsWhileTheTreeIsAskedForAskOnceMoreAfterIt() {
        var state = SwayIPCState()
        _ = state.handle(.start)
        // Before the subscription is even confirmed: the tree is in flight.
        #expect(state.handle(.received(Self.windowEvent)) == [])
        #expect(state.handle(.received(Self.subscribed)) == [])
        #expect(state.handle(.received(Self.workspaceEvent)) == [])
        #expect(state.handle(.received(Self.tree([(5, "a", true)]))) == [
            .report([ToplevelWindow(id: 5, appID: "a", pid: 1005, activated: true)]), .send(Self.getTree),
        ])
        // The same tree: nothing to report, nothing in flight.
        #expect(state.handle(.received(Self.tree([(5, "a", true)]))) == [])
        #expect(state.handle(.received(Self.windowEvent)) == [.send(Self.getTree)])
        #expect(state.handle(.received(Self.tree([(6, "b", true), (5, "a", false)]))) == [
            .report([
                ToplevelWindow(id: 5, appID: "a", pid: 1005, activated: false),
                ToplevelWindow(id: 6, appID: "b", pid: 1006, activated: true),
            ])
        ])
        // Other events are none of its business.
        #expect(state.handle(.received(SwayIPCMessage(type: 0x8000_0006))) == [])
    }

    @Test func aFocusEventOfAKnownWindowIsReportedBeforeTheTree() {
        var state = SwayIPCState()
        _ = state.handle(.start)
        _ = state.handle(.received(Self.subscribed))
        _ = state.handle(.received(Self.tree([(5, "a", true), (6, "b", false)])))
        let focus = SwayIPCMessage(
            type: SwayIPCMessage.windowEvent,
            payload: Array(#"{"change": "focus", "container": {"id": 6, "pid": 1006, "app_id": "b", "focused": true}}"#.utf8))
        let focused = [
            ToplevelWindow(id: 5, appID: "a", pid: 1005, activated: false), ToplevelWindow(id: 6, appID: "b", pid: 1006, activated: true),
        ]
        #expect(state.handle(.received(focus)) == [.report(focused), .send(Self.getTree)])
        // The tree then agrees: nothing more to report.
        #expect(state.handle(.received(Self.tree([(5, "a", false), (6, "b", true)]))) == [])
        // A focus event of a window not known yet waits for the tree.
        let unknown = SwayIPCMessage(
            type: SwayIPCMessage.windowEvent, payload: Array(#"{"change": "focus", "container": {"id": 9}}"#.utf8))
        #expect(state.handle(.received(unknown)) == [.send(Self.getTree)])
    }

    @Test func theFirstTreeIsReportedEvenWithoutWindows() {
        var state = SwayIPCState()
        _ = state.handle(.start)
        _ = state.handle(.received(Self.subscribed))
        #expect(state.handle(.received(Self.tree([]))) == [.report([])])
    }

    @Test func aRefusedSubscriptionFails() {
        var state = SwayIPCState()
        _ = state.handle(.start)
        let refused = SwayIPCMessage(type: SwayIPCMessage.subscribe, payload: Array(#"{"success": false}"#.utf8))
        guard case .fail(let reason)? = state.handle(.received(refused)).first else {
            Issue.record("not failed")
            return
        }
        #expect(reason.hasPrefix("sway refused to subscribe"))
        #expect(state.handle(.received(Self.tree([(5, "a", true)]))) == [])
    }

    @Test func aReplyToNoRequestFails() {
        var state = SwayIPCState()
        _ = state.handle(.start)
        #expect(state.handle(.received(Self.tree([]))) == [
            .fail(reason: "sway sent a reply of type 4 to no request of that type")
        ])
    }

    @Test func malformedTreesFail() {
        for (payload, reason) in [
            (#"{"nodes": [{"id": 5, "pid": 7"#, "sway sent a tree that is not JSON"),
            (#"[]"#, "sway sent a tree that is not a JSON object"),
            (#"{"nodes": {"id": 5}}"#, "sway sent a tree whose nodes is not an array"),
            (#"{"nodes": [{"pid": 7}]}"#, "sway sent a view without a container id"),
            (#"{"nodes": [{"id": 5, "pid": "seven"}]}"#, "sway sent a view whose pid is not a process ID"),
        ] {
            var state = SwayIPCState()
            _ = state.handle(.start)
            _ = state.handle(.received(Self.subscribed))
            let actions = state.handle(.received(SwayIPCMessage(type: SwayIPCMessage.getTree, payload: Array(payload.utf8))))
            guard case .fail(let text)? = actions.first, actions.count == 1 else {
                Issue.record("\(payload): \(actions)")
                continue
            }
            #expect(text.hasPrefix(reason), "\(payload): \(text)")
        }
    }
}
