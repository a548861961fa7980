extension NotifyBusSource {
    /// The first settled status (running, unavailable or failed: the source has published its
    /// state or found it cannot), or the current one after `timeout`. Run the source first.
    public func firstStatus(timeout: Duration) async -> SourceStatus {
        await withTaskGroup(of: SourceStatus?.self) { group in
            group.addTask {
                for await status in self.statusUpdates() where status.isSettled { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? self.status
        }
    }
}

extension [any NotifyBusSource] {
    /// Each source's first settled status, waited for side by side (see `firstStatus(timeout:)`),
    /// in the order of the sources.
    public func firstStatuses(timeout: Duration) async -> [SourceStatus] {
        await withTaskGroup(of: (Int, SourceStatus).self) { group in
            for (index, source) in enumerated() {
                group.addTask { (index, await source.firstStatus(timeout: timeout)) }
            }
            var statuses = map(\.status)
            for await (index, status) in group { statuses[index] = status }
            return statuses
        }
    }
}
