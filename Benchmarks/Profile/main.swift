// A plain loop over one benchmark scenario, for a profiler (not run by report.sh):
//   swift build -c release --product Profile
//   valgrind --tool=callgrind .build/release/Profile suspended 1000000
//   perf record -g .build/release/Profile flush 1000
// Scenarios: suspended (publish by key), handle (publish by handle), handle-at (by handle, time
// given: no clock read), batch (by key, 4 per `publish(_:at:)`), active (publish + poll every 64),
// flush (10 subscriptions: resume + poll of 1000 keys each), fanout (100 suspended subscribers),
// fanout-active (a new bus per 1000 publishes to 100 active subscribers, each polled every 64).
// The flush alone (resume, poll and freeing the events; not the publishes that fill the holds),
// per key: ÷ (N × 10,000) of
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*flushAll*' .build/release/Profile flush N
import NotifyBus

let arguments = CommandLine.arguments
let scenario = arguments.count > 1 ? arguments[1] : "suspended"
let count = arguments.count > 2 ? Int(arguments[2])! : 1_000_000
let keys = (0..<100).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
let bus = NotificationBus()
var sink = 0

switch scenario {
case "suspended", "handle", "handle-at", "batch":
    let subscription = bus.subscribe(["**"], policy: .latest)
    subscription.suspend()
    let handles = keys.map { bus.handle(for: $0) }
    if scenario == "handle" {
        for i in 0..<count { bus.publish(handles[i % 100], .integer(Int64(i))) }
    } else if scenario == "handle-at" {
        for i in 0..<count { bus.publish(handles[i % 100], .integer(Int64(i)), at: .seconds(1)) }
    } else if scenario == "batch" {
        for i in stride(from: 0, to: count, by: 4) {
            bus.publish([
                (key: keys[i % 100], value: .integer(Int64(i))),
                (key: keys[(i + 1) % 100], value: .integer(Int64(i + 1))),
                (key: keys[(i + 2) % 100], value: .integer(Int64(i + 2))),
                (key: keys[(i + 3) % 100], value: .integer(Int64(i + 3))),
            ])
        }
    } else {
        for i in 0..<count { bus.publish(keys[i % 100], .integer(Int64(i))) }
    }
    subscription.resume()
    sink = subscription.poll().count
case "active":
    let subscription = bus.subscribe(["**"], policy: .latest)
    for i in 0..<count {
        bus.publish(keys[i % 100], .integer(Int64(i)))
        if i % 64 == 63 { sink &+= subscription.poll().count }
    }
case "flush":
    // As the Flush benchmark: 10 subscriptions holding 1000 keys each, resumed and polled.
    let manyKeys = (0..<1000).map { "device/sensor\($0 / 10)/reading\($0 % 10)" }
    let subscriptions = (0..<10).map { _ in bus.subscribe(["**"], policy: .latest) }
    for _ in 0..<count {
        for s in subscriptions { s.suspend(); sink &+= s.poll().count }
        for (i, key) in manyKeys.enumerated() { bus.publish(key, .integer(Int64(i))) }
        sink &+= flushAll(subscriptions)
    }
case "fanout":
    let subscriptions = (0..<100).map { _ in bus.subscribe(["**"], policy: .latest) }
    for s in subscriptions { s.suspend() }
    for i in 0..<count { bus.publish(keys[i % 100], .integer(Int64(i))) }
    sink = subscriptions.count
case "fanout-active":
    // As the FanOut benchmark's samples: a new bus per 1000 publishes.
    for _ in 0..<(count / 1000) {
        let bus = NotificationBus()
        let subscriptions = (0..<100).map { _ in bus.subscribe(["**"], policy: .latest) }
        for key in keys { bus.publish(key, .integer(0)) }
        for s in subscriptions { sink &+= s.poll().count }
        for i in 0..<1000 {
            bus.publish(keys[i % 100], .integer(Int64(i)))
            if i % 64 == 63 { for s in subscriptions { sink &+= s.poll().count } }
        }
        for s in subscriptions { sink &+= s.poll().count }
    }
default:
    fatalError("unknown scenario \(scenario)")
}
print(scenario, count, sink)

/// Resumes and polls each subscription and frees the events: the flush alone, for `--toggle-collect`.
@inline(never) func flushAll(_ subscriptions: [Subscription]) -> Int {
    var flushed = 0
    for s in subscriptions {
        s.resume()
        flushed &+= s.poll().count
    }
    return flushed
}
