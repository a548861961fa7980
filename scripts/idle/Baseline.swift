// The idle baselines for scripts/measure-idle: a minimal async Swift program that uses the
// runtime as notifywatch does: a few child tasks run (so the cooperative pool has worker
// threads, as in any async program), then it waits on an AsyncStream, idle.
//
// Built twice: as it is, with the Swift runtime and no Foundation; and with
// `-D FOUNDATION_ESSENTIALS`, linking FoundationEssentials as swift-argument-parser does.
#if FOUNDATION_ESSENTIALS
import FoundationEssentials
#endif

@main
struct Baseline {
    static func main() async {
        #if FOUNDATION_ESSENTIALS
        let started = Date()
        #else
        let started = ContinuousClock.now
        #endif
        await withTaskGroup(of: Int.self) { group in
            for i in 0..<4 { group.addTask { (0..<1000).reduce(i, &+) } }
            for await _ in group {}
        }
        let stream = AsyncStream<Int> { _ in }
        for await _ in stream {}
        print(started)
    }
}
