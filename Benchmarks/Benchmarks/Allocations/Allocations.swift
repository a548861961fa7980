// What the bus allocates, which does not depend on the machine's load: mallocs (the benchmark
// package's MallocInterposer counts every malloc of the process while a sample is measured) per
// 1,000 operations, the operations of the timing suites, each sample on a bus made for it and
// warmed up first (every key known, every hold filled). Each metric has a threshold in
// Benchmarks/Thresholds (`swift package benchmark thresholds check --target Allocations`, which
// scripts/test runs): an allocation more per publish, per flushed key or per delivered
// notification shows as 1,000 more and fails it, as does one fewer until the threshold is updated
// (`swift package --allow-writing-to-package-directory benchmark thresholds update --target
// Allocations`). Benchmarks/README.md, "Thresholds".
import Benchmark
import NotifyBus

/// 100 keys shaped like real ones (longer than 15 bytes, so not stored inline in the `String`).
let keys = (0..<100).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
/// Operations per sample.
let operations = 1000

/// Malloc counts only (no timing: a count is the same on any machine), 20 samples after 3 of
/// warm-up; the threshold check allows a difference of 2 at p90 in a sample of 1,000 operations
/// (what the runtime's own bookkeeping can add now and then), so one allocation more per
/// operation fails it.
func allocations() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.mallocCountTotal],
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: .seconds(10),
        maxIterations: 20,
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 2])]
    )
}

// The names have no space or `/`: `thresholds update` writes such a name's file with `_` for them,
// which `thresholds check` then does not find (ordo-one/benchmark issue 373, 1.38.1).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = allocations()

    // A publish to `count` suspended subscribers, every key known and held, by key or by handle.
    for (name, count, byHandle) in [("publish-suspended-by-key", 1, false), ("publish-suspended-by-handle", 1, true),
                                    ("publish-100-suspended", 100, false)] {
        Benchmark(name) { benchmark in
            let bus = NotificationBus()
            let subscriptions = (0..<count).map { _ in bus.subscribe(["**"], policy: .latest) }
            for subscription in subscriptions { subscription.suspend() }
            let handles = keys.map { bus.handle(for: $0) }
            for key in keys { bus.publish(key, .integer(0)) }
            benchmark.startMeasurement()
            for i in 0..<operations {
                if byHandle {
                    bus.publish(handles[i % 100], .integer(Int64(i)))
                } else {
                    bus.publish(keys[i % 100], .integer(Int64(i)))
                }
            }
            benchmark.stopMeasurement()
            blackHole(subscriptions)
        }
    }

    Benchmark("publish-active-polled-every-64") { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        for key in keys { bus.publish(key, .integer(0)) }
        blackHole(subscription.poll())
        benchmark.startMeasurement()
        for i in 0..<operations {
            bus.publish(keys[i % 100], .integer(Int64(i)))
            if i % 64 == 63 { blackHole(subscription.poll()) }
        }
        blackHole(subscription.poll())
        benchmark.stopMeasurement()
    }

    // 10 subscriptions, each holding the 100 keys (not measured): a sample resumes and polls them,
    // 1,000 keys flushed.
    Benchmark("flush-10-subscriptions-100-keys") { benchmark in
        let bus = NotificationBus()
        let subscriptions = (0..<10).map { _ in bus.subscribe(["**"], policy: .latest) }
        for subscription in subscriptions {
            subscription.suspend()
            blackHole(subscription.poll())
        }
        for (index, key) in keys.enumerated() { bus.publish(key, .integer(Int64(index))) }
        benchmark.startMeasurement()
        for subscription in subscriptions {
            subscription.resume()
            blackHole(subscription.poll())
        }
        benchmark.stopMeasurement()
    }
}
