// Publishing to a suspended subscriber, beside its anchors (Benchmarks/README.md, "Targets"):
//   publish by key      vs `Mutex<[String: Int]>` upsert over the same 100 keys   (target ≤ 1.5×)
//   publish by handle   vs a bare `Mutex` lock/unlock                              (target ≤ 2.5×)
// Each sample is 1000 publishes (scalingFactor .kilo), so the median in µs is ns per publish.
// Two more, for the analysis: publish by handle with the time given (`at:`, as a replay does, so
// no clock is read), and the clock read alone (`BusClock.continuous().now()`), which every
// publish without `at:` pays. And publish by key in batches of 4 (`publish(_:at:)`: one clock read
// and one lock per batch, the array built per batch as a source would), per key.
import Benchmark
import NotifyBus
import Synchronization

/// 100 keys shaped like real ones (longer than 15 bytes, so not stored inline in the `String`).
let keys = (0..<100).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }

final class Anchor: Sendable {
    let map = Mutex<[String: Int]>([:])
    let counter = Mutex<Int>(0)
}

/// Timing only (no malloc counters, which would slow every allocation), 3 s per benchmark.
func timing() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .throughput],
        timeUnits: .nanoseconds,
        warmupIterations: 100,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = timing()

    // MARK: publish by key

    Benchmark("publish suspended by key (ours)") { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        subscription.suspend()
        for key in keys { bus.publish(key, .integer(0)) }  // every key known and held
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(keys[i % 100], .integer(Int64(i)))
        }
        benchmark.stopMeasurement()
        blackHole(subscription)
    }

    Benchmark("publish suspended by key (anchor: Mutex<[String: Int]> upsert)") { benchmark in
        let anchor = Anchor()
        for key in keys { anchor.map.withLock { $0[key] = 0 } }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            let key = keys[i % 100]
            anchor.map.withLock { $0[key] = i }
        }
        benchmark.stopMeasurement()
        blackHole(anchor)
    }

    Benchmark("publish suspended by key, batches of 4 (ours, per key)") { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        subscription.suspend()
        for key in keys { bus.publish(key, .integer(0)) }
        benchmark.startMeasurement()
        for i in stride(from: 0, to: benchmark.scaledIterations.count, by: 4) {
            bus.publish([
                (key: keys[i % 100], value: .integer(Int64(i))),
                (key: keys[(i + 1) % 100], value: .integer(Int64(i + 1))),
                (key: keys[(i + 2) % 100], value: .integer(Int64(i + 2))),
                (key: keys[(i + 3) % 100], value: .integer(Int64(i + 3))),
            ])
        }
        benchmark.stopMeasurement()
        blackHole(subscription)
    }

    // MARK: publish by handle

    Benchmark("publish suspended by handle (ours)") { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        subscription.suspend()
        let handles = keys.map { bus.handle(for: $0) }
        for handle in handles { bus.publish(handle, .integer(0)) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(handles[i % 100], .integer(Int64(i)))
        }
        benchmark.stopMeasurement()
        blackHole(subscription)
    }

    Benchmark("publish suspended by handle, time given (ours, no clock read)") { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        subscription.suspend()
        let handles = keys.map { bus.handle(for: $0) }
        for handle in handles { bus.publish(handle, .integer(0), at: .zero) }
        let time = Duration.seconds(1)
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(handles[i % 100], .integer(Int64(i)), at: time)
        }
        benchmark.stopMeasurement()
        blackHole(subscription)
    }

    Benchmark("clock read (BusClock.continuous().now())") { benchmark in
        let clock = BusClock.continuous()
        var sum = Duration.zero
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            sum += clock.now()
        }
        benchmark.stopMeasurement()
        blackHole(sum)
    }

    Benchmark("publish suspended by handle (anchor: Mutex lock/unlock)") { benchmark in
        let anchor = Anchor()
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            anchor.counter.withLock { $0 &+= i }
        }
        benchmark.stopMeasurement()
        blackHole(anchor.counter.withLock { $0 })
    }
}
