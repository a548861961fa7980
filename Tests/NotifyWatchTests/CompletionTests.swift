import Foundation
import NotifyBusSources
import TestSupport
import Testing

/// The shell completions scripts/install writes come from swift-argument-parser: `--source` and
/// `--no-source` complete the names of the sources, from the sources' own list (notifybusd's
/// with its `lifecycle` source after them).
@Suite("Shell completions")
struct CompletionTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func sourceOptionsCompleteEverySourceName(shell: String) throws {
        for (tool, extra) in [(notifywatch, [String]()), (Paths.executable("notifybusd"), ["lifecycle"])] {
            let process = try ChildProcess(
                executable: tool, arguments: ["--generate-completion-script", shell], environment: ChildProcess.environment(with: [:]))
            process.closeInput()
            var script = ""
            while let line = process.readLine(timeout: patience) { script += line + "\n" }
            #expect(process.waitForExit(timeout: patience).map(ChildProcess.exitStatus(ofWaitStatus:)) == 0)
            // The list, as each shell writes one.
            let names = SystemSources.names + extra
            let list = switch shell {
            case "bash": names.map { "'\($0)'" }.joined(separator: "$'\\n'")
            case "zsh": "(" + names.map { "'\($0)'" }.joined(separator: " ") + ")"
            default: "'" + names.joined(separator: " ") + "'"
            }
            #expect(script.components(separatedBy: list).count - 1 == 2, "\(tool) \(shell): \(list)")
            #expect(SystemSources.names.suffix(2) == ["memory", "thermal"])
        }
    }
}
