// The idle baseline for scripts/measure-idle: a minimal Swift program linked like
// notifywatch (Foundation, Dispatch, Swift concurrency) and using the runtime the same
// way: a few child tasks run (so the cooperative pool has worker threads, as in any
// async program), then it waits on an AsyncStream, idle.
import Foundation

@main
struct Baseline {
    static func main() async {
        let started = Date()
        await withTaskGroup(of: Int.self) { group in
            for i in 0..<4 { group.addTask { (0..<1000).reduce(i, &+) } }
            for await _ in group {}
        }
        let stream = AsyncStream<Int> { _ in }
        for await _ in stream {}
        print(started)
    }
}
