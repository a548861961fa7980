// An app that uses NotifyBus the way an iOS app uses system notifications:
// while it is in the background its subscription is suspended, and when it
// comes back to the foreground it gets one notification per key that changed,
// with the net change and how many events it stands for.
//
//   swift run AppLifecycleExample
import NotifyBus

let bus = NotificationBus()

/// Plays the device: a few seconds of rotations, charging and a locale change.
func device(_ bus: NotificationBus, _ lifecycle: Subscription) async throws {
    bus.publish("orientation", "portrait")
    bus.publish("battery/BAT0/level", 0.42)
    bus.publish("battery/BAT0/state", "unplugged")
    try await Task.sleep(for: .milliseconds(50))

    print("app: → background")
    lifecycle.suspend()
    for orientation in ["landscape-right", "portrait", "landscape-left"] as [JSONValue] {
        bus.publish("orientation", orientation)
    }
    bus.publish("battery/BAT0/state", "charging")
    for level in [0.43, 0.44, 0.45] { bus.publish("battery/BAT0/level", .number(level)) }
    bus.publish("locale", ["LANG": "de_DE.UTF-8"])  // not subscribed: never delivered
    try await Task.sleep(for: .milliseconds(50))

    print("app: → foreground")
    lifecycle.resume()
    try await Task.sleep(for: .milliseconds(50))
    bus.publish("orientation", "portrait")
    try await Task.sleep(for: .milliseconds(50))
    lifecycle.cancel()
}

let subscription = bus.subscribe(["orientation", "battery/**"], policy: .changed)
try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask {
        for await event in subscription {
            switch event {
            case .notification(let n) where n.coalesced > 1:
                let was = n.previous.map { " (was \($0))" } ?? ""
                print("app: \(n.key) is now \(n.value)\(was), after \(n.coalesced) changes in the background")
            case .notification(let n):
                print("app: \(n.key) = \(n.value)")
            case .suspended:
                print("app: paused; the bus holds what changes")
            case .resumed(_, let flushed):
                print("app: resumed; \(flushed) key(s) changed while away")
            case .resync:
                print("app: lost track; every current value follows")
            }
        }
    }
    group.addTask { try await device(bus, subscription) }
    try await group.waitForAll()
}
