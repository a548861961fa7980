extension NotifyBusSource {
    /// The first settled status (running, unavailable or failed: the source has published its
    /// state or found it cannot), or the current one after `timeout`. Run the source first.
    ///
    /// `sleep` waits out the timeout (by default `Task.sleep`; a program that must not start
    /// libdispatch's timers installs `LoopExecutor`, which runs `Task.sleep` on its loops' timers,
    /// or passes `EventLoopThread.sleep(for:)`). It is cancelled once the status came; a
    /// cancelled `Task.sleep` still wakes its executor at its deadline (the runtime's wake-up job
    /// stays scheduled), so a program that must not wake when idle passes
    /// `EventLoopThread.sleep(for:)`, whose timer is cancelled with it.
    public func firstStatus(
        timeout: Duration, sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) async -> SourceStatus {
        await withTaskGroup(of: SourceStatus?.self) { group in
            group.addTask {
                for await status in self.statusUpdates() where status.isSettled { return status }
                return nil
            }
            group.addTask {
                await sleep(timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? self.status
        }
    }
}

extension [any NotifyBusSource] {
    /// Each source's first settled status, waited for side by side (see
    /// `firstStatus(timeout:sleep:)`), in the order of the sources.
    public func firstStatuses(
        timeout: Duration, sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) async -> [SourceStatus] {
        await withTaskGroup(of: (Int, SourceStatus).self) { group in
            for (index, source) in enumerated() {
                group.addTask { (index, await source.firstStatus(timeout: timeout, sleep: sleep)) }
            }
            var statuses = map(\.status)
            for await (index, status) in group { statuses[index] = status }
            return statuses
        }
    }
}
