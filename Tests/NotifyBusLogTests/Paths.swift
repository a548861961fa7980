import Foundation

/// Where the package's files are, found from this source file.
enum Paths {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let exampleLogs = packageRoot.appendingPathComponent("Examples/logs")
    static let badLogs = packageRoot.appendingPathComponent("Tests/NotifyBusLogTests/Fixtures/bad")

    /// The example logs, by name without extension.
    static var exampleLogNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: exampleLogs.path)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }.map { String($0.dropLast(6)) }.sorted()
    }

    /// The `notifywatch` binary built beside the test bundle.
    static var notifywatch: URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent().appendingPathComponent("notifywatch")
    }
}

/// Runs a program to completion and returns its status and output.
func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil) throws
    -> (status: Int32, stdout: String, stderr: String)
{
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}
