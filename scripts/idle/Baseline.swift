// The idle baseline for scripts/measure-idle: a minimal Swift program linked like
// notifywatch (Foundation, Dispatch, Swift concurrency) that starts a task and waits.
import Foundation

@main
struct Baseline {
    static func main() async {
        let started = Date()
        _ = ProcessInfo.processInfo.environment.count
        let stream = AsyncStream<Int> { _ in }
        for await _ in stream {}
        print(started)
    }
}
