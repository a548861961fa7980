// A live app on NotifyBus: it watches the real sources of this machine, does its
// "work" (a tick per second) while in the foreground, and pauses while in the
// background. Type `bg` to send it to the background and `fg` to bring it back:
// on `fg` it prints what changed while it was away, one line per key.
//
//   swift run LiveAppExample            (then type bg, fg, quit)
import NotifyBus
import NotifyBusSources
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Prints one line at once, also through a pipe (where `print` would buffer).
func say(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
}

let bus = NotificationBus()
// Every source this machine can run, on one shared loop.
let sources = SystemSources.all(bus: bus)
let inBackground = Atomic<Bool>(false)

await withTaskGroup(of: Void.self) { group in
    for source in sources {
        group.addTask { try? await source.run() }
        group.addTask {
            for await status in source.statusUpdates() { say("[\(source.name)] \(status)") }
        }
    }
    // Once every source has published its state (or found it cannot), the app subscribes: its
    // first notifications are the current values.
    for source in sources {
        for await status in source.statusUpdates() where status.isSettled { break }
    }
    let app = bus.subscribe(
        ["battery/**", "power/**", "orientation", "locale", "time/*", "display/**", "network/**", "system/sleep", "session/locked"],
        policy: .changed, initial: .current)
    // What the app is told.
    group.addTask {
        for await event in app {
            switch event {
            case .notification(let n) where n.kind == .flushed:
                let count = n.coalesced == 1 ? "once" : "\(n.coalesced) times"
                say("  while away, \(n.key) changed \(count): \(n.previous?.jsonText ?? "nothing") → \(n.value)")
            case .notification(let n):
                say("  \(n.key) = \(n.value)")
            case .suspended:
                say("(in the background: work paused, notifications held)")
            case .resumed(_, let flushed):
                say("(back in the foreground: \(flushed) key(s) changed)")
            case .resync:
                say("(too much changed to keep track; the current values follow)")
            }
        }
    }
    // The app's own work, paused in the background.
    group.addTask {
        var ticks = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if !inBackground.load(ordering: .relaxed) {
                ticks += 1
                if ticks % 10 == 0 { say("(working: \(ticks) s of foreground work)") }
            }
        }
    }
    say("type bg, fg or quit")
    while let line = readLine() {
        switch line.split(separator: " ").first.map(String.init) ?? "" {
        case "bg":
            inBackground.store(true, ordering: .relaxed)
            app.suspend()
        case "fg":
            for source in sources { await source.reread() }  // catch up, as after a stop
            inBackground.store(false, ordering: .relaxed)
            app.resume()
        case "quit":
            app.cancel()
            group.cancelAll()
            return
        default:
            say("type bg, fg or quit")
        }
    }
    app.cancel()
    group.cancelAll()
}
