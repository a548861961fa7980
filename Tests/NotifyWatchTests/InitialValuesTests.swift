import NotifyBus
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("notifywatch's initial values")
struct InitialValuesTests {
    /// `notifywatch --json` against a logind stand-in that takes a moment to name the session:
    /// `session/locked` is among the initial values (`coalesced` 0), not a live event after them.
    @Test func theSessionsLockIsAnInitialValue() async throws {
        let bus = try PrivateBus()
        let mock = try await MockService(bus: bus, template: "logind", name: "org.freedesktop.login1")
        try runPythonDBus(address: bus.address, """
            manager = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1')
            manager.AddSession('c1', 'seat0', dbus.UInt32(1000), 'user', True, dbus_interface='org.freedesktop.DBus.Mock')
            manager.AddMethod('org.freedesktop.login1.Manager', 'GetSessionByPID', 'u', 'o',
                "import time\\ntime.sleep(0.2)\\nret = dbus.ObjectPath('/org/freedesktop/login1/session/c1')",
                dbus_interface='org.freedesktop.DBus.Mock')
            session = bus.get_object('org.freedesktop.login1', '/org/freedesktop/login1/session/c1')
            session.SetLockedHint(True, dbus_interface='org.freedesktop.login1.Session')
            """)
        let watcher = try Watcher(["--source", "login", "--system-bus", bus.address], testbed: nil)
        let (source, notes) = watcher.start(initial: 2)
        #expect(source?["source"] == "login")
        #expect(source?["status"] == "running")
        #expect(Set(notes) == [Note("system/sleep", "awake", coalesced: 0), Note("session/locked", true, coalesced: 0)])
        #expect(watcher.linesArriving(within: .milliseconds(300)) == [])
        #expect(watcher.stop(with: SIGTERM) == 0)
        _ = mock
    }
}
