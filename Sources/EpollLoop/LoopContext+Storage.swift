/// Deferred work and loop-local storage.
extension LoopContext {
    /// Runs `work` on this thread after the events of the current round are handled, before the
    /// loop sleeps again (libdbus's "dispatch soon" maps onto this).
    public func runSoon(_ work: @escaping () -> Void) {
        guard !isTornDown else { return }
        soon.append(work)
    }

    /// The value this loop keeps for `key`; assign `nil` to release it. Values are released on
    /// this thread when the loop shuts down, so `deinit`s that free C objects run here too.
    public subscript<Value>(local key: LoopLocalKey<Value>) -> Value? {
        get { locals[key.id] as? Value }
        set {
            if isTornDown { return }
            locals[key.id] = newValue.map { $0 as Any }
        }
    }

    /// Runs the work queued with `runSoon` so far; work that it queues in turn runs after the
    /// next round (which then does not sleep).
    func runSoonWork() {
        guard !soon.isEmpty else { return }
        let work = soon
        soon = []
        for item in work { item() }
    }
}
