// Fan-out to 100 subscribers, each matching the key (Benchmarks/README.md, "Targets").
//   ours, suspended: 100 suspended subscribers; publish round-robin over 100 keys.
//   ours, active:    100 active subscribers, each drained with poll() every 64 publishes.
//   anchor:          100 `Mutex<[String: Int]>` upserts of the same key (one map per subscriber).
// Each sample is 1000 publishes: the median in µs is ns per publish.
import Benchmark
import NotifyBus
import Synchronization

let keys = (0..<100).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
let fanOut = 100
let batch = 64

/// One subscriber's map (`Mutex` is not copyable, so it cannot sit in an array directly).
final class LockedMap: Sendable {
    let map = Mutex<[String: Int]>([:])
}

final class Maps: Sendable {
    let maps = (0..<fanOut).map { _ in LockedMap() }
}

func timing() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .throughput],
        timeUnits: .nanoseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(4),
        maxIterations: 1_000_000
    )
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = timing()

    Benchmark("fan-out to 100 suspended (ours)") { benchmark in
        let bus = NotificationBus()
        let subscriptions = (0..<fanOut).map { _ in bus.subscribe(["**"], policy: .latest) }
        for s in subscriptions { s.suspend() }
        for key in keys { bus.publish(key, .integer(0)) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(keys[i % 100], .integer(Int64(i)))
        }
        benchmark.stopMeasurement()
        blackHole(subscriptions)
    }

    Benchmark("fan-out to 100 active (ours, poll every 64)") { benchmark in
        let bus = NotificationBus()
        let subscriptions = (0..<fanOut).map { _ in bus.subscribe(["**"], policy: .latest) }
        for key in keys { bus.publish(key, .integer(0)) }
        for s in subscriptions { blackHole(s.poll()) }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(keys[i % 100], .integer(Int64(i)))
            if i % batch == batch - 1 { for s in subscriptions { blackHole(s.poll()) } }
        }
        for s in subscriptions { blackHole(s.poll()) }
        benchmark.stopMeasurement()
    }

    Benchmark("fan-out to 100 (anchor: 100 Mutex<[String: Int]> upserts)") { benchmark in
        let anchor = Maps()
        for map in anchor.maps { for key in keys { map.map.withLock { $0[key] = 0 } } }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            let key = keys[i % 100]
            for map in anchor.maps { map.map.withLock { $0[key] = i } }
        }
        benchmark.stopMeasurement()
        blackHole(anchor)
    }
}
