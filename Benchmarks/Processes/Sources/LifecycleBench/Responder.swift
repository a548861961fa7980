import BenchSupport
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// `LifecycleBench responder`: an app's own D-Bus service, a child process that first moves itself
/// into the app's scope (`--cgroup DIR`), owns `--name NAME` and answers every
/// `org.notifybus.Bench.Ping()` at `/` at once, with a raw libdbus loop. It prints `ready` once it
/// owns the name, and runs until killed.
final class Responder {
    static let interface = "org.notifybus.Bench"
    private let connection: RawConnection

    init(arguments: Arguments) throws {
        if let group = arguments.optional("cgroup") { try Cgroup2.move(into: group) }
        connection = try RawConnection(address: arguments.string("address", default: ""))
        try connection.requestName(arguments.string("name", default: "org.notifybus.Bench.App"))
    }

    func run() {
        let bytes = Array("ready\n".utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        while true {
            guard let message = connection.next(timeoutMilliseconds: -1) else { return }
            guard message.isMethodCall(interface: Self.interface, member: "Ping") else { continue }
            connection.send(message.reply([]))
            connection.flush()
        }
    }
}
