import NotifyBus

/// The windows in sway's tree (the reply to `GET_TREE`).
///
/// A view is a node with a `pid`: its `id` is the container id, `app_id` its app id (absent or
/// `null` for an Xwayland view), `focused` whether it is activated. Views are found wherever they
/// lie, under `nodes` and `floating_nodes` of every node (workspaces, split containers, and the
/// scratchpad's workspace `__i3_scratch`, where hidden windows lie).
enum SwayIPCTree {
    /// Why a tree could not be read.
    struct Malformed: Error, CustomStringConvertible {
        /// What is wrong, in words.
        var description: String
    }

    /// The views of the tree in `payload`, ordered by container id.
    /// - Throws: `Malformed` when the payload is not JSON, not an object, or has a view without a
    ///   usable container id or PID.
    static func windows(inTree payload: [UInt8]) throws(Malformed) -> [ToplevelWindow] {
        let tree: JSONValue
        do {
            tree = try JSONValue(parsing: payload)
        } catch {
            throw Malformed(description: "sway sent a tree that is not JSON: \(error)")
        }
        guard case .object = tree else { throw Malformed(description: "sway sent a tree that is not a JSON object") }
        var windows: [ToplevelWindow] = []
        try collect(tree, into: &windows)
        return windows.sorted { $0.id < $1.id }
    }

    /// The container id of the window a window event says is focused now (`"change": "focus"`);
    /// `nil` for any other event, or one that cannot be read (the tree asked for next tells).
    static func focusedWindow(inEvent payload: [UInt8]) -> UInt64? {
        guard let event = try? JSONValue(parsing: payload), event["change"]?.stringValue == "focus",
            case .integer(let rawID)? = event["container"]?["id"]
        else { return nil }
        return UInt64(exactly: rawID)
    }

    private static func collect(_ node: JSONValue, into windows: inout [ToplevelWindow]) throws(Malformed) {
        if let pidValue = node["pid"], pidValue != .null {
            guard case .integer(let rawID)? = node["id"], let id = UInt64(exactly: rawID) else {
                throw Malformed(description: "sway sent a view without a container id")
            }
            guard case .integer(let rawPID) = pidValue, let pid = Int32(exactly: rawPID) else {
                throw Malformed(description: "sway sent a view whose pid is not a process ID: \(pidValue)")
            }
            windows.append(ToplevelWindow(
                id: id, appID: node["app_id"]?.stringValue, pid: pid, activated: node["focused"]?.boolValue ?? false))
        }
        for member in ["nodes", "floating_nodes"] {
            guard let children = node[member] else { continue }
            guard case .array(let nodes) = children else {
                throw Malformed(description: "sway sent a tree whose \(member) is not an array")
            }
            for child in nodes { try collect(child, into: &windows) }
        }
    }
}
