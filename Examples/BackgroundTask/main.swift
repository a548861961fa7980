// An app that finishes some work in the background, with the time notifybusd grants it
// (`notifybusd --freeze-background`): it begins a background task, prints each warning that the
// grant runs out, works for SECONDS, then ends the task.
//
//     swift run BackgroundTaskExample [SECONDS] [REASON]
//
// One JSON line per step on standard output: the grant, each warning, the end (or why it failed).
#if canImport(Glibc)
import Glibc
#endif
import DBus
import NotifyBusClient

/// Writes `line` at once, also into a pipe (where `print` would keep it in a buffer).
func emit(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}

let arguments = CommandLine.arguments.dropFirst()
let work = Duration.seconds(Int(arguments.first ?? "") ?? 10)
let reason = arguments.dropFirst().first ?? "finishing work"

do {
    let client = try await NotifyBusClient()
    let task = try await client.beginBackgroundTask(reason: reason)
    emit("{\"task\": \(task.number), \"seconds\": \(task.granted.components.seconds)}")
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await left in task.expirations { emit("{\"expiring\": \(left.components.seconds)}") }
        }
        try? await Task.sleep(for: work)
        do throws(DBusError) {
            try await task.end()
            emit("{\"ended\": true}")
        } catch {
            emit("{\"ended\": false, \"error\": \"\(error.name)\"}")
        }
        group.cancelAll()
    }
} catch {
    emit("{\"error\": \"\(error)\"}")
}
