// Memory of a suspended subscriber must stay flat in the number of events (Benchmarks/README.md,
// "Targets": 10M events over 100 keys). One sample publishes 1M, or 10M, events round-robin over
// 100 keys to a fresh bus with one suspended subscriber; the malloc counters and the resident
// memory of the two must be the same: the hold keeps one entry per key however many events come.
import Benchmark
import NotifyBus

let keys = (0..<100).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }

/// The malloc counters and the resident memory are measured in separate runs: the thread that samples
/// the resident memory allocates as it goes, which would add to the malloc counts in proportion to time.
func memory(_ metrics: [BenchmarkMetric]) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: metrics + [.wallClock, .throughput],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        scalingFactor: .one,
        maxDuration: .seconds(30),
        maxIterations: 3
    )
}

func suspendedSubscriber(events: Int, _ what: String, _ metrics: [BenchmarkMetric]) {
    Benchmark(
        "suspended subscriber, \(events / 1_000_000)M events over 100 keys (\(what))",
        configuration: memory(metrics)
    ) { benchmark in
        let bus = NotificationBus()
        let subscription = bus.subscribe(["**"], policy: .latest)
        subscription.suspend()
        for i in 0..<events {
            bus.publish(keys[i % 100], .integer(Int64(i)))
        }
        // Measured up to here: what the suspended subscriber holds is still alive.
        benchmark.stopMeasurement()
        subscription.resume()
        let flushed = subscription.poll().count(where: { $0.notification != nil })
        precondition(flushed == 100, "expected one flushed notification per key, got \(flushed)")
    }
}

let benchmarks: @Sendable () -> Void = {
    for events in [1_000_000, 10_000_000] {
        suspendedSubscriber(events: events, "malloc", [.mallocCountTotal, .mallocBytesCount, .mallocFreeDelta])
        suspendedSubscriber(events: events, "resident", [.peakMemoryResident])
    }
}
