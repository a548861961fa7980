import CLibFuzzer
import FuzzSupport
import NotifyBus
import NotifyBusLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One input: a whole event-log file. Whatever the bytes, reading returns records and at
/// most one error (strict) or records and the bad lines (skipping them); what was read
/// replays without a crash, every replay line printing.
func fuzzEventLog(_ bytes: UnsafeBufferPointer<UInt8>) {
    let array = Array(bytes)
    for skipping in [false, true] {
        let (log, _) = EventLog.readPrefix(of: array, file: "fuzz", skippingBadLines: skipping)
        guard let log else { continue }
        let replayer = LogReplayer(log: log)
        do throws(EventLogError) {
            try replayer.run { lines in
                for line in lines { _ = "\(line.t) \(line.subscriber) \(line.event)" }
            }
        } catch {
            _ = error.description
        }
        _ = log.text
    }
    _ = try? EventLog(parsing: String(decoding: array, as: UTF8.self))
}

#if NOTIFYBUS_LIBFUZZER
/// The input function libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzEventLog(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `<Module>_main`): libFuzzer's driver,
/// with the command line as libFuzzer reads it.
@_cdecl("FuzzEventLog_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
}
#else
/// Runs the harness once per file named on the command line.
@main struct FuzzEventLogFiles {
    static func main() { replayFiles("FuzzEventLog", fuzzEventLog) }
}
#endif
