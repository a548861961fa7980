import DBus
import TestSupport
import Logging
import NotifyBus
import NotifyBusSources
import Testing

private let service = "org.freedesktop.portal.Desktop"
private let path = "/org/freedesktop/portal/desktop"
private let interface = "org.freedesktop.portal.Settings"

private func key(_ namespace: String, _ name: String) -> String { "settings/\(namespace)/\(name)" }
private let appearance = "org.freedesktop.appearance"
private let gnome = "org.gnome.desktop.interface"

/// PortalSettingsSource against a portal stand-in (Fixtures/portal.py) on a private session bus.
@Suite("PortalSettingsSource with a portal stand-in")
struct PortalSettingsSourceTests {
    let bus: PrivateBus
    let client: DBusClient

    init() async throws {
        (bus, client) = try await PrivateBus.startedWithClient(.session)
    }

    func startPortal(version: Int) async throws -> MockService {
        try await MockService(bus: bus, template: fixture("portal.py"), name: service, parameters: #"{"version": \#(version)}"#)
    }

    func makeSource(namespaces: [String] = []) -> RunningSource<PortalSettingsSource> {
        let notifications = NotificationBus()
        let log = LogRecorder()
        let source = PortalSettingsSource(
            bus: notifications,
            configuration: .init(
                address: bus.dbusAddress, namespaces: namespaces,
                connection: .init(initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(200), defaultTimeout: .seconds(5))),
            logger: log.logger)
        return RunningSource(source, bus: notifications, log: log)
    }

    func setSetting(_ namespace: String, _ name: String, _ value: DBusValue) async throws {
        try await mockCall(client, service, path, "SetSetting", [.string(namespace), .string(name), .variant(value)])
    }

    @Test func version2ReadAllThenSettingChanged() async throws {
        let portal = try await startPortal(version: 2)
        let running = makeSource()
        #expect(await running.waitFor(key(appearance, "accent-color"), [0.25, 0.5, 1.0]))
        #expect(running.bus.value(forKey: key(appearance, "color-scheme")) == .integer(0))
        #expect(running.bus.value(forKey: key(appearance, "contrast")) == 0)
        #expect(running.bus.value(forKey: key(gnome, "color-scheme")) == "default")
        #expect(running.bus.value(forKey: key(gnome, "text-scaling-factor")) == 1.25)
        #expect(running.bus.value(forKey: key(gnome, "enable-animations")) == true)
        #expect(running.bus.value(forKey: key(gnome, "cursor-size")) == 24)
        #expect(running.bus.value(forKey: key("org.gnome.desktop.a11y", "always-show-text-caret")) == false)
        #expect(running.source.status == .running)

        // gsettings set … color-scheme prefer-dark: the portal sends both namespaces.
        try await setSetting(gnome, "color-scheme", .string("prefer-dark"))
        try await setSetting(appearance, "color-scheme", .uint32(1))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 1))
        #expect(running.bus.value(forKey: key(gnome, "color-scheme")) == "prefer-dark")
        try await setSetting(appearance, "accent-color", .structure([.double(1), .double(0), .double(0)]))
        #expect(await running.waitFor(key(appearance, "accent-color"), [1.0, 0.0, 0.0]))
        // The same value again: no signal; a re-read publishes nothing new.
        try await setSetting(appearance, "color-scheme", .uint32(1))
        await running.source.reread()
        #expect(running.values(key(appearance, "color-scheme")) == [0, 1])
        // A new key appears through a signal.
        try await setSetting(gnome, "font-name", .string("Cantarell 11"))
        #expect(await running.waitFor(key(gnome, "font-name"), "Cantarell 11"))
        try await running.stop()
        _ = portal
    }

    @Test func version1WithDoubleWrappedReadWorksTheSame() async throws {
        let portal = try await startPortal(version: 1)
        let running = makeSource()
        #expect(await running.waitFor(key(appearance, "color-scheme"), 0))
        #expect(running.bus.value(forKey: key(appearance, "accent-color")) == nil)
        // Version 1: Read double-wraps, ReadOne does not exist; the mapping unwraps both.
        let read = try await client.call(destination: BusName(validating: service), path: ObjectPath(validating: path), interface: InterfaceName(validating: interface), member: "Read",
                                         arguments: [.string(appearance), .string("color-scheme")])
        #expect(read == [.variant(.variant(.uint32(0)))])
        #expect(PortalSettingsSource.json(from: read[0]) == 0)
        do {
            _ = try await client.call(destination: BusName(validating: service), path: ObjectPath(validating: path), interface: InterfaceName(validating: interface), member: "ReadOne",
                                      arguments: [.string(appearance), .string("color-scheme")])
            Issue.record("ReadOne should not exist in version 1")
        } catch {
            #expect(error.name == DBusError.Name.unknownMethod)
        }
        try await setSetting(appearance, "color-scheme", .uint32(2))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 2))
        try await running.stop()
        _ = portal
    }

    @Test func namespacesCanBeChosen() async throws {
        let portal = try await startPortal(version: 2)
        let running = makeSource(namespaces: [appearance, "org.gnome.desktop.a11y*"])
        #expect(await running.waitFor(key(appearance, "color-scheme"), 0))
        #expect(await running.waitFor(key("org.gnome.desktop.a11y", "always-show-text-caret"), false))
        try await setSetting(gnome, "color-scheme", .string("prefer-light"))
        try await setSetting(appearance, "color-scheme", .uint32(2))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 2))
        #expect(running.notifications.allSatisfy { !$0.key.hasPrefix("settings/\(gnome)/") })
        try await running.stop()
        _ = portal
    }

    @Test func portalRestartRereadsAndNullsWhatIsGone() async throws {
        let first = try await startPortal(version: 2)
        let running = makeSource()
        #expect(await running.waitFor(key(appearance, "accent-color"), [0.25, 0.5, 1.0]))
        try await setSetting(appearance, "color-scheme", .uint32(1))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 1))
        try await first.stop()
        #expect(await running.waitForStatus("unavailable"))
        // An older portal comes back: no accent-color, colour scheme back to 0.
        let second = try await startPortal(version: 1)
        #expect(await running.waitForStatus("running"))
        #expect(await running.waitFor(key(appearance, "accent-color"), nil))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 0))
        // Unchanged settings were not published again.
        #expect(running.values(key(gnome, "gtk-theme")) == ["Adwaita"])
        try await setSetting(gnome, "gtk-theme", .string("HighContrast"))
        #expect(await running.waitFor(key(gnome, "gtk-theme"), "HighContrast"))
        try await running.stop()
        _ = second
    }

    @Test func malformedSignalsAreReportedAndOthersFlow() async throws {
        let portal = try await startPortal(version: 2)
        let running = makeSource()
        #expect(await running.waitFor(key(appearance, "color-scheme"), 0))
        try await mockCall(client, service, path, "EmitSignal", [
            .string(interface), .string("SettingChanged"), .string("ss"),
            .array(elementSignature: "v", [.variant(.string(appearance)), .variant(.string("color-scheme"))]),
        ])
        try await setSetting(appearance, "color-scheme", .uint32(1))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 1))
        #expect(running.problems.recent.contains { $0.contains("expected 'ssv'") })
        // Logged with the source and the sender.
        #expect(running.problems.all.contains {
            $0.message.contains("expected 'ssv'") && $0.level == .warning && $0.metadata["source"] == "settings"
                && $0.metadata["peer"] != nil
        })
        #expect(running.source.status == .running)
        try await running.stop()
        _ = portal
    }

    @Test func sessionBusGoesAwayAndComesBack() async throws {
        let portal = try await startPortal(version: 2)
        let running = makeSource()
        #expect(await running.waitFor(key(appearance, "color-scheme"), 0))
        bus.stop()
        portal.process.terminate()
        #expect(await running.waitForStatus("unavailable"))
        try bus.start()
        let second = try await startPortal(version: 2)
        #expect(await running.waitForStatus("running"))
        let reconnected = await eventually {
            if case .connected = await client.state { return true }
            return false
        }
        #expect(reconnected)
        try await setSetting(appearance, "color-scheme", .uint32(2))
        #expect(await running.waitFor(key(appearance, "color-scheme"), 2))
        try await running.stop()
        _ = second
    }

    /// A value whose JSON text passes 65,536 bytes is not published: the key keeps its previous
    /// value, the problem is logged with the key and the length, and later values flow.
    @Test func aValueOver64KiBOfJSONIsRefusedAndTheKeyKeepsItsValue() async throws {
        let portal = try await startPortal(version: 2)
        let running = makeSource()
        let font = key(gnome, "font-name")
        try await setSetting(gnome, "font-name", .string("Cantarell 11"))
        #expect(await running.waitFor(font, "Cantarell 11"))
        // 65,534 letters and two quotes: exactly 65,536 bytes of JSON, published.
        let longest = String(repeating: "a", count: 65_534)
        try await setSetting(gnome, "font-name", .string(longest))
        #expect(await running.waitFor(font, .string(longest)))
        // One more byte: refused.
        try await setSetting(gnome, "font-name", .string(longest + "a"))
        // Escapes count as written: 10,923 U+0001 are 65,540 bytes of JSON (`\u0001` each).
        try await setSetting(gnome, "font-name", .string(String(repeating: "\u{01}", count: 10_923)))
        try await setSetting(gnome, "font-name", .string("Cantarell 12"))
        #expect(await running.waitFor(font, "Cantarell 12"))
        #expect(running.values(font) == ["Cantarell 11", .string(longest), "Cantarell 12"])
        let problems = running.problems.all.filter { $0.level == .warning && $0.metadata["key"] == .string(font) }
        #expect(problems.count == 2)
        #expect(problems.first?.message.contains("65537 bytes") == true)
        #expect(problems.last?.message.contains("65540 bytes") == true)
        try await running.stop()
        _ = portal
    }
}

@Suite("Settings variant → JSON")
struct SettingsMappingTests {
    @Test func everyTypeMaps() {
        let json = PortalSettingsSource.json
        #expect(json(.uint32(1)) == .integer(1))
        #expect(json(.variant(.variant(.uint32(1)))) == 1)
        #expect(json(.structure([.double(0.1), .double(0.2), .double(0.3)])) == [0.1, 0.2, 0.3])
        #expect(json(.boolean(true)) == true)
        #expect(json(.uint64(UInt64.max)).jsonText == "18446744073709551615")
        #expect(json(.uint64(UInt64.max)) == JSONValue(UInt64.max))
        #expect(json(.double(.nan)) == .null)
        #expect(json(.strings(["a", "b"])) == ["a", "b"])
        #expect(json(.array(elementSignature: "y", [.byte(104), .byte(105)])) == [104, 105])
        #expect(json(.vardict([("k", .string("v"))])) == ["k": "v"])
        #expect(json(.dictionary(keySignature: "u", valueSignature: "i", [DBusDictionaryEntry(key: .uint32(1), value: .int32(2))])) == ["1": 2])
        #expect(json(.objectPath("/a")) == "/a")
    }

    @Test func namespaceSelection() {
        #expect(PortalSettingsSource.selects([], namespace: "anything"))
        #expect(PortalSettingsSource.selects(["org.gnome.*"], namespace: "org.gnome.desktop.interface"))
        #expect(!PortalSettingsSource.selects(["org.gnome.desktop"], namespace: "org.gnome.desktop.interface"))
    }
}
