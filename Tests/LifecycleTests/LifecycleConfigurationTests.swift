import NotifyBusLifecycle
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The options and the configuration file of `notifybusd --freeze-background`, and systemd's
/// app unit names.
@Suite struct LifecycleConfigurationTests {
    @Test func theFileSetsEveryKeyAndExemptMayRepeat() throws {
        var configuration = LifecycleConfiguration()
        #expect(configuration.wakeGrace == 10 && configuration.taskLimit == 30 && configuration.appUnits == .make)
        try configuration.apply(configuration: """
            # phone
            delay = 30

            exempt = org.example.Music org.example.Maps
            exempt = org.example.Call
            toplevels = wlr
            cgroup-root = /user.slice/user-1000.slice/user@1000.service/app.slice
            wake-grace = 5
            task-limit = 120
            app-units = existing
            """, file: "lifecycle.conf")
        #expect(configuration.wakeGrace == 5)
        #expect(configuration.taskLimit == 120)
        #expect(configuration.appUnits == .existing)
        #expect(configuration.delay == 30)
        #expect(configuration.exempt == ["org.example.Music", "org.example.Maps", "org.example.Call"])
        #expect(configuration.toplevels == .wlr)
        #expect(configuration.cgroupRoot == "/user.slice/user-1000.slice/user@1000.service/app.slice")
    }

    @Test func everyBackendHasItsName() throws {
        #expect(LifecycleConfiguration.Toplevels.allCases.map(\.rawValue) == ["auto", "sway", "wlr", "kde"])
        var configuration = LifecycleConfiguration()
        try configuration.apply(configuration: "toplevels = kde\n", file: "lifecycle.conf")
        #expect(configuration.toplevels == .kde)
        #expect(try LifecycleConfiguration.toplevels("kde", where: "--toplevels") == .kde)
    }

    @Test(arguments: [
        ("dealy = 3", "lifecycle.conf:1: unknown key \"dealy\""),
        ("delay = 1", "lifecycle.conf:1: delay must be whole seconds from 2 to 3600"),
        ("delay = 3601", "from 2 to 3600"),
        ("delay = 2.5", "not \"2.5\""),
        ("\ntoplevels = kwin", "lifecycle.conf:2: toplevels must be auto, sway, wlr or kde"),
        ("cgroup-root = app.slice", "cgroup-root must be an absolute cgroup path"),
        ("delay", "not a `key = value` line"),
        ("wake-grace = 0", "lifecycle.conf:1: wake-grace must be whole seconds from 1 to 600"),
        ("task-limit = 601", "lifecycle.conf:1: task-limit must be whole seconds from 1 to 600"),
        ("app-units = some", "lifecycle.conf:1: app-units must be make or existing"),
    ])
    func aBadLineIsNamedWithItsFileAndLine(text: String, expected: String) {
        var configuration = LifecycleConfiguration()
        #expect {
            try configuration.apply(configuration: text, file: "lifecycle.conf")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func theDefaultRootIsTheUserManagersAppSlice() {
        #expect(LifecycleConfiguration.defaultCgroupRoot(
            ofGroup: "/user.slice/user-1000.slice/user@1000.service/app.slice/notifybus.service", uid: 1000)
            == "/user.slice/user-1000.slice/user@1000.service/app.slice")
        #expect(LifecycleConfiguration.defaultCgroupRoot(ofGroup: "/user.slice/user-1000.slice/session-2.scope", uid: 1000) == nil)
        #expect(LifecycleConfiguration.defaultCgroupRoot(ofGroup: "/user.slice/user@1001.service/x", uid: 1000) == nil)
    }

    @Test func systemdsAppUnitNamesCarryTheWholeAppID() {
        #expect(AppUnit.appID(ofUnit: "app-org.example.A-1.scope") == "org.example.A")
        #expect(AppUnit.appID(ofUnit: "app-gnome-org.gnome.Terminal-4242.scope") == "org.gnome.Terminal")
        #expect(AppUnit.appID(ofUnit: "app-flatpak-org.example.My\\x2dApp-77.scope") == "org.example.My-App")
        #expect(AppUnit.appID(ofUnit: "app-gnome-org.example.A@123abc.service") == "org.example.A")
        #expect(AppUnit.appID(ofUnit: "app-org.example.A.slice") == nil)
        #expect(AppUnit.appID(ofUnit: "app-a-b-c-d.scope") == nil)
        #expect(AppUnit.appID(ofUnit: "session-2.scope") == nil)
        #expect(AppUnit.isUnit("/r/app.slice/app-x-1.scope", under: "/r/app.slice"))
        #expect(!AppUnit.isUnit("/r/app.slice/app-x-1.scope/sub", under: "/r/app.slice"))
        #expect(!AppUnit.isUnit("/r/app.slice", under: "/r/app.slice"))
        #expect(!AppUnit.isUnit("/other/app-x-1.scope", under: "/r/app.slice"))
    }

    @Test(arguments: [
        (["--freeze-delay", "1"], "--freeze-delay must be whole seconds from 2 to 3600"),
        (["--freeze-background", "--freeze-delay", "soon"], "not \"soon\""),
        (["--toplevels", "kwin"], "--toplevels must be auto, sway, wlr or kde"),
        (["--freeze-background", "--freeze-config", "/nonexistent/lifecycle.conf"], "/nonexistent/lifecycle.conf"),
        (["--freeze-exempt"], "--freeze-exempt"),
        (["--no-source", "lifecyle"], "unknown source \"lifecyle\""),
        (["--freeze-wake-grace", "0"], "--freeze-wake-grace must be whole seconds from 1 to 600"),
        (["--freeze-background", "--freeze-task-limit", "long"], "--freeze-task-limit must be whole seconds from 1 to 600"),
    ])
    func badOptionsExit64NamingWhatIsWrong(arguments: [String], expected: String) async throws {
        let log = try makeTemporaryFile("notifybusd-options")
        defer { unlink(log) }
        let daemon = try ChildProcess(Paths.notifybusd, arguments, environment: ["PATH": "/usr/bin:/bin"], log: log)
        let status = await daemon.exit(within: .seconds(20))
        #expect(status.flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 64)
        #expect(readFile(log)?.contains(expected) == true, "\(readFile(log) ?? "")")
    }

    @Test func anUnknownKeyInTheConfigFileExits64WithoutFreezeBackground() async throws {
        let config = try makeTemporaryFile("lifecycle-config")
        defer { unlink(config) }
        try writeFile(config, "delay = 20\nexmept = org.example.A\n")
        let log = try makeTemporaryFile("notifybusd-options")
        defer { unlink(log) }
        let daemon = try ChildProcess(Paths.notifybusd, ["--freeze-config", config], environment: ["PATH": "/usr/bin:/bin"], log: log)
        #expect(await daemon.exit(within: .seconds(20)).flatMap(ChildProcess.exitStatus(ofWaitStatus:)) == 64)
        #expect(readFile(log)?.contains("\(config):2: unknown key \"exmept\"") == true, "\(readFile(log) ?? "")")
    }
}
