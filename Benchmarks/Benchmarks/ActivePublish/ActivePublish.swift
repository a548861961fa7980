// Publishing to one active subscriber, side by side with its anchors (Benchmarks/README.md, "Targets"):
//   NotificationBus.publish         + the consumer draining with `poll()` every 64 publishes
//   NotificationCenter.post         with one observer (called synchronously by `post`), value in userInfo
//   AsyncStream.Continuation.yield  + the consumer draining 64 elements with `next()` every 64 yields
// Target: ≥ 3× faster than NotificationCenter.post. Every variant pays for its consumer on the same
// thread, so the figures are comparable. Each sample is 1000 publishes: the median in µs is ns per publish.
import Benchmark
import Foundation
import NotifyBus

let keys = (0..<100).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
let batch = 64

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

    Benchmark("publish active (ours, poll every 64)") { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        for key in keys { bus.publish(key, .integer(0)) }
        blackHole(subscription.poll())
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(keys[i % 100], .integer(Int64(i)))
            if i % batch == batch - 1 { blackHole(subscription.poll()) }
        }
        blackHole(subscription.poll())
        benchmark.stopMeasurement()
    }

    Benchmark("publish active (anchor: NotificationCenter.post, 1 observer)") { benchmark in
        let center = NotificationCenter()
        let names = keys.map { Notification.Name($0) }
        let observers = names.map { center.addObserver(forName: $0, object: nil, queue: nil) { blackHole($0) } }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            center.post(name: names[i % 100], object: nil, userInfo: ["value": i])
        }
        benchmark.stopMeasurement()
        for observer in observers { center.removeObserver(observer) }
    }

    Benchmark("publish active (anchor: NotificationCenter.post, 1 observer, no userInfo)") { benchmark in
        let center = NotificationCenter()
        let names = keys.map { Notification.Name($0) }
        let observers = names.map { center.addObserver(forName: $0, object: nil, queue: nil) { blackHole($0) } }
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            center.post(name: names[i % 100], object: nil)
        }
        benchmark.stopMeasurement()
        for observer in observers { center.removeObserver(observer) }
    }

    Benchmark("publish active (anchor: AsyncStream.yield, next() every 64)") { benchmark in
        let (stream, continuation) = AsyncStream<(String, Int)>.makeStream()
        var iterator = stream.makeAsyncIterator()
        benchmark.startMeasurement()
        var pending = 0
        for i in benchmark.scaledIterations {
            continuation.yield((keys[i % 100], i))
            pending += 1
            if i % batch == batch - 1 {
                while pending > 0 { blackHole(await iterator.next()); pending -= 1 }
            }
        }
        while pending > 0 { blackHole(await iterator.next()); pending -= 1 }
        benchmark.stopMeasurement()
        continuation.finish()
    }
}
