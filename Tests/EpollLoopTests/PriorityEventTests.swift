import EpollLoop
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("EPOLLPRI registrations")
struct PriorityEventTests {
    /// Out-of-band data on a Unix stream socket raises `EPOLLPRI` (as a fired PSI trigger does):
    /// a `.priority` registration is called for it, once per byte sent.
    @Test func priorityRegistrationsSeeOutOfBandData() async throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        let loop = try EventLoopThread(name: "test-priority")
        let priority = Recorder<IOEvents>()
        let receiver = pair[1]
        try await loop.submit { context in
            _ = try? context.register(fileDescriptor: receiver, interest: .priority) { events in
                priority.append(events)
                var byte: UInt8 = 0
                _ = recv(receiver, &byte, 1, Int32(MSG_OOB))
            }
        }
        var byte: UInt8 = 7
        #expect(send(pair[0], &byte, 1, Int32(MSG_OOB)) == 1)
        #expect(await priority.wait(for: 1).first == .priority)
        try await Task.sleep(for: .milliseconds(50))
        #expect(priority.all == [.priority])
        #expect(IOEvents.priority.description == "[priority]")
        await loop.shutdown()
    }
}
