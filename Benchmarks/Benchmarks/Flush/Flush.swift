// Flush on resume, per key (Benchmarks/README.md, "Targets": ≤ 20 ns per key plus one wake-up).
//   ours:   subscriptions suspended, one event published to each of N keys (not measured), then
//           resume + poll() of the flush (measured). 10,000 flushed keys per sample: with N = 100,
//           100 subscriptions; with N = 1000, 10. The median in µs divided by 10 is ns per key.
//   anchor: the same number of `[Int: Int]` maps of N entries, each swapped for an empty one and walked.
// poll() takes the flush without a wake-up; the wake-up of a waiting task is what Latency measures.
import Benchmark
import NotifyBus

let keysPerSample = 10_000

func timing() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .throughput],
        timeUnits: .nanoseconds,
        warmupIterations: 5,
        scalingFactor: .one,
        maxDuration: .seconds(3),
        maxIterations: 100_000
    )
}

func flushBenchmark(keyCount: Int) {
    let keys = (0..<keyCount).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
    let subscriberCount = keysPerSample / keyCount
    Benchmark("flush \(keyCount) keys (ours, resume + poll)") { benchmark in
        let bus = NotificationBus()
        let subscriptions = (0..<subscriberCount).map { _ in bus.subscribe(["**"], policy: .latest) }
        for s in subscriptions { s.suspend(); blackHole(s.poll()) }
        for (i, key) in keys.enumerated() { bus.publish(key, .integer(Int64(i))) }
        benchmark.startMeasurement()
        for s in subscriptions {
            s.resume()
            blackHole(s.poll())
        }
        benchmark.stopMeasurement()
    }
    Benchmark("flush \(keyCount) keys (anchor: swap and walk [Int: Int])") { benchmark in
        var maps = (0..<subscriberCount).map { _ in
            Dictionary(uniqueKeysWithValues: (0..<keyCount).map { ($0, $0) })
        }
        benchmark.startMeasurement()
        var sum = 0
        for m in maps.indices {
            var taken: [Int: Int] = [:]
            swap(&taken, &maps[m])
            for (k, v) in taken { sum &+= k &+ v }
        }
        benchmark.stopMeasurement()
        blackHole(sum)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = timing()
    flushBenchmark(keyCount: 100)
    flushBenchmark(keyCount: 1000)
}
