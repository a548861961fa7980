import Foundation
import NotifyBus
import Testing
import TestSupport

/// Examples/LiveApp, run as a user would, against a umockdev battery.
@Suite struct ExampleAppTests {
    @Test func liveAppPausesInTheBackgroundAndSaysWhatChangedOnReturn() throws {
        let testbed = try Testbed.laptop()
        let app = try ChildProcess(
            executable: Paths.executable("LiveAppExample"), arguments: [],
            environment: ChildProcess.environment(with: ["LD_PRELOAD": Paths.preload, "UMOCKDEV_DIR": testbed.root]))
        defer { _ = app.waitForExit(timeout: patience) }
        func lines(until predicate: (String) -> Bool) -> [String] {
            var seen: [String] = []
            while let line = app.readLine(timeout: patience) {
                seen.append(line)
                if predicate(line) { break }
            }
            return seen
        }
        #expect(lines { $0.contains("battery/BAT0/state = \"unplugged\"") }.last?.contains("unplugged") == true)
        app.send("bg")
        #expect(lines { $0.contains("in the background") }.last?.contains("work paused") == true)
        try testbed.update("BAT0", ["status": "Charging"])
        try testbed.update("BAT0", ["status": "Full"])
        app.send("fg")
        let back = lines { $0.contains("battery/BAT0/state changed") }
        #expect(back.contains { $0.contains("back in the foreground: 1 key(s) changed") })
        #expect(back.last == "  while away, battery/BAT0/state changed 2 times: \"unplugged\" → \"full\"")
        app.send("quit")
    }
}
