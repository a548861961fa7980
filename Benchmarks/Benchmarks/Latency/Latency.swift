// Delivery latency to a waiting task: a ping-pong between two tasks (Benchmarks/README.md, "Targets").
//   ours:   the main task publishes "ping" and awaits "pong" on its subscription; an echo task
//           iterates the "ping" subscription and publishes "pong" for each.
//   anchor: the same with two AsyncStreams.
// Target ≤ 1.5× the anchor. Each sample is 1000 round trips: the median in µs is ns per round trip.
import Benchmark
import NotifyBus

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

    Benchmark("ping-pong round trip (ours, subscription AsyncSequence)") { benchmark in
        let bus = NotificationBus()
        let pings = bus.subscribe(["ping"])
        let pongs = bus.subscribe(["pong"])
        let ping = bus.handle(for: "ping")
        let pong = bus.handle(for: "pong")
        let echo = Task {
            for await notification in pings.notifications {
                bus.publish(pong, notification.value)
            }
        }
        var replies = pongs.notifications.makeAsyncIterator()
        // One round trip first, so the echo task is waiting when the measurement starts.
        bus.publish(ping, .integer(-1))
        blackHole(await replies.next())
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            bus.publish(ping, .integer(Int64(i)))
            blackHole(await replies.next())
        }
        benchmark.stopMeasurement()
        pings.cancel()
        await echo.value
    }

    Benchmark("ping-pong round trip (anchor: AsyncStream)") { benchmark in
        let (pings, toEcho) = AsyncStream<Int>.makeStream()
        let (pongs, toMain) = AsyncStream<Int>.makeStream()
        let echo = Task {
            for await value in pings { toMain.yield(value) }
        }
        var replies = pongs.makeAsyncIterator()
        toEcho.yield(-1)
        blackHole(await replies.next())
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            toEcho.yield(i)
            blackHole(await replies.next())
        }
        benchmark.stopMeasurement()
        toEcho.finish()
        await echo.value
    }
}
