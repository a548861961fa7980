// Parse and compare a JSON object of 10,000 members (issue: object members were looked up
// linearly, so parsing and comparing were quadratic in the member count).
//   ours:    `JSONValue(parsing:)` of the object's text, then `==` against the same members in
//            reverse order (parsed before the measurement).
//   anchors: Foundation's `JSONSerialization.jsonObject(with:)` of the same text, then
//            `NSDictionary.isEqual` against the reversed one; and building a `[String: Int]`
//            of the 10,000 members from their names and values (no parsing at all).
import Benchmark
import Foundation
import NotifyBus

let memberCount = 10_000

func objectText(reversed: Bool) -> String {
    let order = reversed ? Array((0..<memberCount).reversed()) : Array(0..<memberCount)
    return "{" + order.map { "\"member\($0)\":\($0)" }.joined(separator: ",") + "}"
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput],
        timeUnits: .microseconds,
        warmupIterations: 3,
        scalingFactor: .one,
        maxDuration: .seconds(3),
        maxIterations: 10_000
    )
    let text = objectText(reversed: false)
    let reversedText = objectText(reversed: true)

    Benchmark("10,000-member object, parse + compare (ours, JSONValue)") { benchmark in
        let other = try JSONValue(parsing: reversedText)
        benchmark.startMeasurement()
        let value = try JSONValue(parsing: text)
        blackHole(value == other)
        benchmark.stopMeasurement()
    }
    Benchmark("10,000-member object, parse + compare (anchor: JSONSerialization)") { benchmark in
        let data = Data(text.utf8)
        let other = try JSONSerialization.jsonObject(with: Data(reversedText.utf8)) as? NSDictionary
        benchmark.startMeasurement()
        let value = try JSONSerialization.jsonObject(with: data) as? NSDictionary
        blackHole(value?.isEqual(other) ?? false)
        benchmark.stopMeasurement()
    }
    Benchmark("10,000-member object (anchor: build a [String: Int])") { benchmark in
        let names = (0..<memberCount).map { "member\($0)" }
        benchmark.startMeasurement()
        var dictionary: [String: Int] = [:]
        for (value, name) in names.enumerated() { dictionary[name] = value }
        blackHole(dictionary)
        benchmark.stopMeasurement()
    }
}
