import Harness

#if canImport(Glibc)
import Glibc
#endif

/// Polls `condition` every millisecond until it holds or `timeout` passes; returns whether it held.
func wait(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(1_000)
    }
    return true
}

/// The `fraction` percentile of `values` in milliseconds (`–` when there are none).
func quantile(_ values: [Duration], _ fraction: Double) -> String {
    values.isEmpty ? "–" : Figure.milliseconds(Samples(nanosecondsOf: values).percentile(fraction))
}
