import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `DaemonBench plain --address A [--name N]`: a plain libdbus service, the anchor of notifybusd's
/// answer times where messages larger than 8 MiB are in flight to it (specification: D-Bus interface,
/// "Responsiveness": no later than a plain libdbus service under the same load, measured in the same run). It owns
/// `N` (`org.notifybus.bench.PlainVersion`) and answers `Get` of `Version` on `/org/notifybus/Bus1`
/// (`org.notifybus.Bus1`) with the variant uint32 2, as notifybusd does; every other method call
/// gets `org.freedesktop.DBus.Error.UnknownMethod`, decided from its header (its body is never
/// read beyond what libdbus does to receive it). One connection, one thread, libdbus's own reading
/// (`dbus_connection_read_write`, 2 KiB a read) after each `poll`: the least any libdbus service does.
/// Prints `ready` once it owns the name; ends when its standard input ends.
final class PlainService {
    static let defaultName = "org.notifybus.bench.PlainVersion"
    private let connection: RawConnection

    init(arguments: Arguments) throws {
        connection = try RawConnection(address: arguments.string("address", default: ""))
        try connection.requestName(arguments.string("name", default: Self.defaultName))
    }

    func run() {
        let line = Array("ready\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        var descriptors = [
            pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
            pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            while let message = connection.pop() { answer(message) }
            descriptors[1].events = Int16(POLLIN) | (connection.hasMessagesToSend ? Int16(POLLOUT) : 0)
            guard poll(&descriptors, 2, -1) > 0 else { continue }
            if descriptors[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 256)
                let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count == 0 || (count < 0 && errno != EINTR) { return }
            }
            if descriptors[1].revents != 0, !connection.readAvailable() { return }
        }
    }

    private func answer(_ message: Message) {
        guard message.isMethodCall else { return }
        if message.path == BenchBed.daemonPath, message.interface == "org.freedesktop.DBus.Properties", message.member == "Get",
           message.arguments == [.string(BenchBed.daemonName), .string("Version")]
        {
            connection.send(message.reply([.variant(.uint32(2))]))
        } else {
            connection.send(message.error(
                name: "org.freedesktop.DBus.Error.UnknownMethod",
                text: "\(message.interface ?? "").\(message.member ?? "") on \(message.path ?? "")"))
        }
    }
}
