import DBus
import TestSupport
import Logging
import NotifyBus
import NotifyBusSources
import Testing

#if canImport(Glibc)
import Glibc
#endif

private let service = "org.freedesktop.locale1"
private let path = "/org/freedesktop/locale1"

/// This target's fixtures (the python-dbusmock templates).
func fixture(_ name: String) -> String {
    let file = "\(#filePath)"
    return String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) + "/Fixtures/" + name
}

/// Replaces `path` by an atomic rename, as editors and localed do.
func replaceFile(_ path: String, _ text: String) throws {
    try writeFile(path + ".new", text)
    guard rename(path + ".new", path) == 0 else { throw HarnessError("rename \(path): errno \(errno)") }
}

/// LocaleSource against a localed stand-in (Fixtures/locale1.py) on a private system bus.
@Suite("LocaleSource with a localed stand-in")
struct LocaleSourceTests {
    let bus: PrivateBus
    let client: DBusClient
    /// A fake /etc: `etc/locale.conf` and `etc/default/locale`.
    let etc: String

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient()
        etc = bus.directory + "/etc"
        mkdir(etc, 0o755)
        mkdir(etc + "/default", 0o755)
    }

    var localeConf: String { etc + "/locale.conf" }
    var defaultLocale: String { etc + "/default/locale" }

    func parameters(_ locale: [String], file: Bool = false, idleExit: Double = 0) -> String {
        let list = locale.map { "\"\($0)\"" }.joined(separator: ", ")
        var json = #"{"locale": [\#(list)], "idle_exit": \#(idleExit)"#
        if file { json += #", "locale_file": "\#(defaultLocale)""# }
        return json + "}"
    }

    func startMock(_ locale: [String], file: Bool = false) async throws -> MockService {
        try await MockService(bus: bus, template: fixture("locale1.py"), name: service, parameters: parameters(locale, file: file))
    }

    func makeSource() -> RunningSource<LocaleSource> {
        let notifications = NotificationBus()
        let log = LogRecorder()
        let source = LocaleSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress, files: [localeConf, defaultLocale],
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    func setLocale(_ entries: [String]) async throws {
        _ = try await client.call(
            destination: BusName(validating: service), path: ObjectPath(validating: path), interface: InterfaceName(validating: service), member: "SetLocale",
            arguments: [.strings(entries), .boolean(false)])
    }

    @Test func publishesTheLocaleAndFollowsSetLocale() async throws {
        let mock = try await startMock(["LANG=de_DE.UTF-8", "LC_TIME=en_GB.UTF-8"])
        let running = makeSource()
        #expect(await running.waitFor("locale", ["LANG": "de_DE.UTF-8", "LC_TIME": "en_GB.UTF-8"]))
        #expect(running.source.status == .running)
        try await setLocale(["LC_MESSAGES=POSIX"])
        #expect(await running.waitFor("locale", ["LANG": "de_DE.UTF-8", "LC_TIME": "en_GB.UTF-8", "LC_MESSAGES": "POSIX"]))
        // Setting LC_TIME equal to LANG drops it (localed's simplification).
        try await setLocale(["LC_TIME=de_DE.UTF-8"])
        #expect(await running.waitFor("locale", ["LANG": "de_DE.UTF-8", "LC_MESSAGES": "POSIX"]))
        // Unchanged: no signal, nothing published; a re-read publishes nothing either.
        try await setLocale(["LC_MESSAGES=POSIX"])
        await running.source.reread()
        #expect(running.values("locale").count == 3)
        // Keys in localed's order.
        if case .object(let object)? = running.values("locale").last { #expect(object.keys == ["LANG", "LC_MESSAGES"]) }
        try await running.stop()
        _ = mock
    }

    @Test func fileEditsThatBypassLocaledArePublished() async throws {
        try writeFile(defaultLocale, "LANG=en_US.UTF-8\n")
        let mock = try await startMock(["LANG=C.UTF-8"], file: true)
        let running = makeSource()
        #expect(await running.waitFor("locale", ["LANG": "en_US.UTF-8"]))

        // An edit behind localed's back (localed sends no signal; it re-reads on the next Get).
        try replaceFile(defaultLocale, "# edited\nLANG=\"fr_FR.UTF-8\"\nexport LC_PAPER=en_GB.UTF-8\n")
        #expect(await running.waitFor("locale", ["LANG": "fr_FR.UTF-8", "LC_PAPER": "en_GB.UTF-8"]))

        // Localed gone and not activatable: the source reads the files itself; locale.conf wins.
        try await mock.stop()
        try replaceFile(localeConf, "LANG=it_IT.UTF-8\n")
        #expect(await running.waitFor("locale", ["LANG": "it_IT.UTF-8"]))
        #expect(running.source.status == .running)
        // Falling back to the files is what the source is for: said at debug, nothing warned.
        #expect(running.problems.all.contains { $0.level == .debug && $0.message.contains("reading the files") })
        #expect(running.problems.recent.isEmpty, "\(running.problems.recent)")
        try await running.stop()
    }

    /// A machine without systemd-localed (no owner, no activatable service: `ServiceUnknown`):
    /// the files are the locale, the normal way there, and nothing is logged at `warning`.
    @Test func withoutLocaledTheFilesAreTheLocaleAndNothingIsWarned() async throws {
        try writeFile(localeConf, "LANG=nl_NL.UTF-8\n")
        let running = makeSource()
        #expect(await running.waitFor("locale", ["LANG": "nl_NL.UTF-8"]))
        #expect(await running.waitForStatus("running"))
        let note = running.problems.all.first { $0.message.contains("reading the files") }
        #expect(note?.level == .debug)
        #expect(note?.message.contains("ServiceUnknown") == true, "\(String(describing: note))")
        #expect(note?.metadata["source"] == "locale")
        #expect(running.problems.recent.isEmpty, "\(running.problems.recent)")
        try await running.stop()
    }

    @Test func idleExitAndBusActivationWithANewUniqueName() async throws {
        try writeFile(defaultLocale, "LANG=en_US.UTF-8\n")
        let script = bus.directory + "/localed.sh"
        try writeFile(script, """
            #!/bin/sh
            exec /usr/bin/python3 -m dbusmock --system -t '\(fixture("locale1.py"))' -p '\(parameters(["LANG=C.UTF-8"], file: true, idleExit: 0.7))' >>'\(bus.directory)/activated.log' 2>&1
            """)
        chmod(script, 0o755)
        try await bus.installService(name: service, exec: script)

        // Every owner the name has, from before the first activation: the stand-in exits 0.7 s
        // after its last call, which on a loaded machine can be before a poll would see it.
        let owners = Recorder<BusName?>()
        let ownerStream = await client.nameOwners(of: BusName(rawValue: service)!)
        let following = Task { for await owner in ownerStream { owners.append(owner) } }
        defer { following.cancel() }
        #expect(await owners.wait(timeout: .seconds(30)) { !$0.isEmpty })
        func distinctOwners(_ history: [BusName?]) -> Set<BusName> { Set(history.compactMap { $0 }) }

        // Nothing runs: the source's Get activates it.
        let running = makeSource()
        #expect(await running.waitFor("locale", ["LANG": "en_US.UTF-8"]))
        // Idle exit: the name goes away; the value and the status stay.
        #expect(await owners.wait(timeout: .seconds(30)) { distinctOwners($0).count == 1 && $0.last == .some(nil) })
        #expect(running.source.status == .running)
        // A call activates a new process; its signal comes from a new unique name.
        try await setLocale(["LANG=de_DE.UTF-8"])
        #expect(await running.waitFor("locale", ["LANG": "de_DE.UTF-8"]))
        #expect(await owners.wait(timeout: .seconds(30)) { distinctOwners($0).count == 2 })
        // Exit again, and a file edit while it is gone: the source asks (activating it once more).
        #expect(await owners.wait(timeout: .seconds(30)) { $0.last == .some(nil) })
        try replaceFile(defaultLocale, "LANG=pt_BR.UTF-8\n")
        #expect(await running.waitFor("locale", ["LANG": "pt_BR.UTF-8"]))
        #expect(running.values("locale") == [["LANG": "en_US.UTF-8"], ["LANG": "de_DE.UTF-8"], ["LANG": "pt_BR.UTF-8"]])
        try await running.stop()
    }

    @Test func wrongTypesAndMalformedEntriesAreReportedAndSkipped() async throws {
        let mock = try await startMock(["LANG=C.UTF-8"])
        let running = makeSource()
        #expect(await running.waitFor("locale", ["LANG": "C.UTF-8"]))
        let source = running.source
        func update(_ value: DBusValue) async throws {
            try await mockCall(client, service, path, "UpdateProperties", [.string(service), .vardict([("Locale", value)])])
        }
        try await update(.string("LANG=xx"))
        #expect(await eventually { running.problems.recent.contains { $0.contains("Locale has type 's'") } })
        try await mockCall(client, service, path, "EmitSignal", [
            .string("org.freedesktop.DBus.Properties"), .string("PropertiesChanged"), .string("s"),
            .array(elementSignature: "v", [.variant(.string(service))]),
        ])
        #expect(await eventually { running.problems.recent.contains { $0.contains("unexpected signal") } })
        try await update(.strings(["LANG=sv_SE.UTF-8", "garbage", "=novar"]))
        #expect(await running.waitFor("locale", ["LANG": "sv_SE.UTF-8"]))
        #expect(running.problems.recent.contains { $0.contains("'garbage' is not NAME=value") })
        #expect(running.values("locale") == [["LANG": "C.UTF-8"], ["LANG": "sv_SE.UTF-8"]])
        #expect(source.status == .running)
        try await running.stop()
        _ = mock
    }

    @Test func busGoesAwayFilesStillCountAndItRecovers() async throws {
        try writeFile(defaultLocale, "LANG=en_US.UTF-8\n")
        let mock = try await startMock(["LANG=C.UTF-8"], file: true)
        let running = makeSource()
        #expect(await running.waitFor("locale", ["LANG": "en_US.UTF-8"]))
        bus.stop()
        mock.process.terminate()
        #expect(await running.waitForStatus("unavailable"))
        try replaceFile(defaultLocale, "LANG=nl_NL.UTF-8\n")
        #expect(await running.waitFor("locale", ["LANG": "nl_NL.UTF-8"]))
        try bus.start()
        let second = try await startMock(["LANG=C.UTF-8"], file: true)
        #expect(await running.waitForStatus("running"))
        // Our own client reconnects too.
        let reconnected = await eventually {
            let state = await client.state
            if case .connected = state { return true }
            return false
        }
        #expect(reconnected)
        try await setLocale(["LANG=es_ES.UTF-8"])
        #expect(await running.waitFor("locale", ["LANG": "es_ES.UTF-8"]))
        try await running.stop()
        _ = second
    }
}

@Suite("Locale parsing")
struct LocaleParsingTests {
    @Test func entriesBecomeAnObject() {
        let (object, invalid) = LocaleSource.object(from: ["LANG=de_DE.UTF-8", "LC_TIME=en_GB.UTF-8", "oops", "=x", "LANG=C"])
        #expect(JSONValue.object(object) == ["LANG": "C", "LC_TIME": "en_GB.UTF-8"])
        #expect(object.keys == ["LANG", "LC_TIME"])
        #expect(invalid == ["oops", "=x"])
    }

    @Test func filesAreReadLikeShellAssignments() {
        let text = "# comment\n\nLANG=\"de_DE.UTF-8\"\n  export LC_ALL='C'  \nLC_TIME=en_GB.UTF-8\r\n"
        #expect(LocaleSource.entries(fromFile: text) == ["LANG=de_DE.UTF-8", "LC_ALL=C", "LC_TIME=en_GB.UTF-8"])
    }
}
