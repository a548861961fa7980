import Foundation
import Testing

/// Several hundred random logs, replayed by the real `notifywatch replay --json`,
/// compared line by line per subscriber with an independent Python implementation
/// of the specification (Fixtures/reference_replay.py).
@Suite struct RandomLogTests {
    @Test(arguments: [1, 2])
    func randomLogsAgreeWithAnIndependentImplementation(seed: Int) throws {
        let script = Paths.packageRoot.appendingPathComponent("Tests/NotifyBusLogTests/Fixtures/reference_replay.py")
        let result = try run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [script.path, "--binary", Paths.notifywatch.path, "--count", "250", "--seed", String(seed)])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("250 random logs"))
    }
}
