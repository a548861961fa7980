/// Calls `done` once, when `count` completions have been signalled (at once for 0).
final class Countdown {
    private var remaining: Int
    private var done: (() -> Void)?

    init(_ count: Int, done: @escaping () -> Void) {
        remaining = count
        self.done = done
        if count <= 0 { fire() }
    }

    func signal() {
        remaining -= 1
        if remaining <= 0 { fire() }
    }

    func fire() {
        let done = self.done
        self.done = nil
        done?()
    }
}
