import DBus
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// "Responsiveness" (specification: D-Bus interface) where messages larger than 8 MiB are in flight to the daemon:
/// the bound is a plain libdbus service's answer time under the same load, measured in the same
/// run (`PlainVersionService` on the same bus, the same calls sent to it by the same kind of
/// attacker, its answers timed by the same kind of probe).
extension HostileClientTests {
    /// The anchor's p99, measured in the same run, that notifybusd's p99 must not pass.
    struct Anchored {
        let daemon: [VersionProbe.Sample]
        let plain: [[VersionProbe.Sample]]
    }

    /// Sends `attack` `rounds` times to notifybusd while a probe asks it for `Version`, and the
    /// same calls to `plain` while a probe asks `plain` for it, before and after: the plain
    /// service's runs bracket the daemon's, so a change of the machine's load during the test
    /// shows as a spread between them.
    func anchoredProbe(
        _ bed: DaemonBed, _ plain: PlainVersionService, rounds: Int = 6,
        _ attack: @escaping @Sendable (RawBusConnection, String) throws -> WireMessage
    ) async throws -> (answers: [(error: String?, time: Duration)], anchored: Anchored) {
        let before = try await underProbe(bed, destination: plain.name, rounds: rounds, attack)
        let daemon = try await underProbe(bed, destination: Names.bus, rounds: rounds, attack)
        let after = try await underProbe(bed, destination: plain.name, rounds: rounds, attack)
        return (daemon.answers, Anchored(daemon: daemon.probe, plain: [before.probe, after.probe]))
    }

    /// Sends `attack` (`rounds` times, on a raw connection of its own) to `destination` while a
    /// probe asks `destination` for `Version`; returns each answer's error name and time, and
    /// the probe's samples.
    func underProbe(
        _ bed: DaemonBed, destination: String, rounds: Int = 3,
        _ attack: @escaping @Sendable (RawBusConnection, String) throws -> WireMessage
    ) async throws -> (answers: [(error: String?, time: Duration)], probe: [VersionProbe.Sample]) {
        let attacker = try RawBusConnection(address: bed.session.address)
        let probe = try NamedVersionProbe(address: bed.session.address, destination: destination)
        while probe.count < 3 { try await Task.sleep(for: .milliseconds(5)) }
        let answers = try await onOwnThread {
            try (0..<rounds).map { _ -> (error: String?, time: Duration) in
                let started = ContinuousClock.now
                let reply = try attack(attacker, destination)
                let time = ContinuousClock.now - started
                measured("\(destination): answer \(reply.errorName ?? "(a reply)") after \(time)")
                return (reply.errorName, time)
            }
        }
        return (answers, await probe.stop())
    }

    /// The daemon's probe answered every call with `Version` 2, at p99 no later than the plain
    /// service's p99 under the same attack.
    ///
    /// The plain service is measured twice, before and after the daemon, and the bound is the
    /// slower of its two p99s plus their difference. With a probe every 10 ms and a body taking
    /// ~100–300 ms to cross, a run has a few dozen samples and its p99 is its slowest, the probe
    /// call that waited behind a whole body. Two runs of the same plain service under the same
    /// calls, seconds apart, differed here by 1–34% of the slower one (five test runs, three
    /// attacks each, at load 2–4 on a shared 2-vCPU VM; e.g. 0.138 s and 0.211 s, 0.190 s and
    /// 0.189 s, 0.219 s and 0.150 s). A daemon later than the plain service by less than the
    /// plain service differs from itself in the same test is not told apart from it: that
    /// difference, measured in every run and printed beside the figures, is the only tolerance.
    func expectServedAsThePlainService(_ anchored: Anchored, during attack: String) {
        let samples = anchored.daemon
        #expect(!samples.isEmpty)
        #expect(samples.allSatisfy { $0.version == 2 }, "Version during \(attack): \(Set(samples.map(\.version)))")
        #expect(anchored.plain.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.version == 2 } }, "the plain service's Version during \(attack)")
        let p99 = percentile(samples.map(\.latency), 0.99)
        let plain = anchored.plain.map { percentile($0.map(\.latency), 0.99) }
        let slower = plain.max() ?? .zero
        let spread = slower - (plain.min() ?? .zero)
        let bound = slower + spread
        measured(
            "\(attack): notifybusd's Get Version p99 \(p99) of \(samples.count), slowest \(samples.map(\.latency).max() ?? .zero); "
                + "the plain libdbus service's p99 \(plain.map { "\($0)" }.joined(separator: " and ")) of "
                + "\(anchored.plain.map { "\($0.count)" }.joined(separator: " and ")) (before and after); ratio \(ratio(p99, slower)) "
                + "to the slower one, spread \(ratio(spread, slower)); bound \(bound)")
        #expect(p99 <= bound, "notifybusd's Get Version p99 \(p99) past the plain service's \(plain) (bound \(bound)) during \(attack)")
    }

    /// `ours / anchor`, two places.
    func ratio(_ ours: Duration, _ anchor: Duration) -> String {
        guard anchor > .zero else { return "–" }
        let hundredths = Int((ours / anchor * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)×"
    }
}

/// `VersionProbe` for any service that answers `Get` of `Version` on `/org/notifybus/Bus1` (the
/// daemon, or the plain service that anchors it): a connection of its own that asks
/// `destination` for it again and again on a thread of its own, every `interval`, recording each
/// answer's time and value, until stopped.
final class NamedVersionProbe: Sendable {
    private let samples = Mutex<[VersionProbe.Sample]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(address: String, destination: String, interval: Duration = .milliseconds(10)) throws {
        let connection = try RawBusConnection(address: address)
        startThread { [self] in
            defer { finished.store(true, ordering: .releasing) }
            while !stopping.load(ordering: .acquiring) {
                let started = ContinuousClock.now
                let version: UInt32?
                do {
                    let reply = try connection.call(
                        destination: destination, path: Names.busPath, interface: Names.properties, member: "Get",
                        arguments: [.string(Names.bus), .string("Version")], timeout: .seconds(10))
                    if case .uint32(let number)? = try? reply.arguments().first?.unwrapped { version = number } else { version = nil }
                } catch {
                    version = nil
                }
                let latency = ContinuousClock.now - started
                samples.withLock { $0.append(VersionProbe.Sample(latency: latency, version: version)) }
                _ = connection.takeInbox()
                usleep(UInt32(interval.components.attoseconds / 1_000_000_000_000))
            }
        }
    }

    /// Stops probing (after the call under way) and returns every sample.
    func stop() async -> [VersionProbe.Sample] {
        stopping.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(5)) }
        return samples.withLock { $0 }
    }

    var count: Int { samples.withLock { $0.count } }
}
