package import NotifyBus

/// What the lifecycle policy says of one app: the value of its `app/<app-id>/lifecycle` key
/// (specification: Freezing background apps).
package struct AppLifecycle: Sendable, Hashable, CustomStringConvertible {
    /// Where the app is.
    package enum State: String, Sendable, Hashable {
        /// One of its windows is activated, and the session is not locked.
        case foreground
        /// None is; not frozen (yet, or because of `reason`).
        case background
        /// Every cgroup of the app is frozen by the policy, and the kernel says so.
        case frozen
        /// Its last window closed.
        case closed
    }

    /// Why an app past the delay in the background is not frozen, the first that applies in
    /// this order.
    package enum Reason: String, Sendable, Hashable, CaseIterable {
        /// Its app id is listed as exempt.
        case exempt
        /// It has no cgroup of its own (no app unit under the cgroup root).
        case noAppUnit = "no-app-unit"
        /// Its cgroup holds a process that is never frozen.
        case protected
        /// An MPRIS player of the app is `Playing`.
        case media
        /// Its cgroup also holds a window of another app that is activated or not yet past the delay.
        case shared
        /// A background task of the app is open.
        case task
        /// A message to it, or someone else, thawed it: it runs for its wake grace.
        case woken
        /// A freeze was not confirmed within the confirmation time.
        case failed
    }

    /// Where the app is.
    package var state: State
    /// Why it is not frozen, while in the background past the delay; `nil` otherwise.
    package var reason: Reason?

    /// A lifecycle value.
    package init(_ state: State, reason: Reason? = nil) {
        self.state = state
        self.reason = reason
    }

    /// The key's value: `{"state": S, "reason": R}`, `reason` `null` when there is none.
    package var value: JSONValue {
        .object(["state": .string(state.rawValue), "reason": reason.map { .string($0.rawValue) } ?? .null])
    }

    /// `state` and, when there is one, `(reason)`.
    package var description: String { reason.map { "\(state.rawValue) (\($0.rawValue))" } ?? state.rawValue }

    /// The key of `appID`: `app/<app-id>/lifecycle`, the app id one segment (`%` written `%25`,
    /// `/` written `%2F`).
    package static func key(of appID: String) -> String {
        var segment = ""
        segment.reserveCapacity(appID.utf8.count)
        for character in appID {
            switch character {
            case "%": segment += "%25"
            case "/": segment += "%2F"
            default: segment.append(character)
            }
        }
        return "app/\(segment)/lifecycle"
    }
}
