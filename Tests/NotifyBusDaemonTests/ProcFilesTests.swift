import NotifyBusDaemon
import SystemSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("What /proc and cgroupfs say")
struct ProcFilesTests {
    @Test func cgroup2MountsAreFoundInMountInfo() {
        let mountInfo = """
            31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
            37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 master:2 - cgroup2 cgroup2 rw
            90 22 0:38 /user.slice /tmp/my\\040view rw,relatime - cgroup2 none rw
            91 22 0:39 / /tmp/odd\\134dir\\011x rw - cgroup2 cgroup2 rw,nsdelegate
            not a mount line at all
            92 22 0:40 / /mnt/x rw - ext4 /dev/sda1 rw
            93 22 0:41 / /mnt/y rw -
            """
        #expect(
            CgroupMount.mounts(inMountInfo: mountInfo) == [
                CgroupMount(root: "/", mountPoint: "/sys/fs/cgroup/unified"),
                CgroupMount(root: "/user.slice", mountPoint: "/tmp/my view"),
                CgroupMount(root: "/", mountPoint: "/tmp/odd\\dir\tx"),
            ])
        #expect(CgroupMount.mounts(inMountInfo: "") == [])
    }

    @Test func groupsMapToDirectoriesUnderTheMountsRoot() {
        let whole = CgroupMount(root: "/", mountPoint: "/sys/fs/cgroup/unified")
        #expect(whole.directory(ofGroup: "/") == "/sys/fs/cgroup/unified")
        #expect(whole.directory(ofGroup: "/user.slice/app.scope") == "/sys/fs/cgroup/unified/user.slice/app.scope")
        #expect(whole.directory(ofGroup: "user.slice") == nil)
        #expect(whole.directory(ofGroup: "/a/../b") == nil)
        let part = CgroupMount(root: "/user.slice", mountPoint: "/tmp/view/")
        #expect(part.directory(ofGroup: "/user.slice") == "/tmp/view")
        #expect(part.directory(ofGroup: "/user.slice/app.scope") == "/tmp/view/app.scope")
        #expect(part.directory(ofGroup: "/user.slicer/app.scope") == nil)
        #expect(part.directory(ofGroup: "/system.slice") == nil)
        #expect(CgroupMount.directory(ofGroup: "/system.slice", in: [part, whole]) == "/sys/fs/cgroup/unified/system.slice")
        #expect(CgroupMount(root: "/", mountPoint: "/").directory(ofGroup: "/a") == "/a")
    }

    @Test func theGroupIsTheZeroLineOfProcPIDCgroup() {
        let hybrid = "9:name=systemd:/\n4:memory:/process_api/87\n0::/user.slice/a:b.scope\n"
        #expect(ControlGroup.group(inCgroupFile: hybrid) == "/user.slice/a:b.scope")
        #expect(ControlGroup.group(inCgroupFile: "0::/\n") == "/")
        #expect(ControlGroup.group(inCgroupFile: "0::/gone (deleted)\n") == nil)
        #expect(ControlGroup.group(inCgroupFile: "1:cpu:/\n") == nil)
        #expect(ControlGroup.group(inCgroupFile: "0::relative\n") == nil)
        #expect(ControlGroup.group(inCgroupFile: "") == nil)
    }

    @Test func frozenIsReadFromCgroupEvents() {
        #expect(ControlGroup.frozen(inEventsFile: "populated 1\nfrozen 1\n") == true)
        #expect(ControlGroup.frozen(inEventsFile: "populated 1\nfrozen 0\n") == false)
        #expect(ControlGroup.frozen(inEventsFile: "populated 1\n") == nil)
        #expect(ControlGroup.frozen(inEventsFile: "frozen 2\n") == nil)
        #expect(ControlGroup.frozen(inEventsFile: "") == nil)
    }

    @Test func theStateLetterFollowsTheLastParenthesis() {
        func state(_ text: String) -> ProcessRunState? { ProcessRunState(stat: Array(text.utf8)) }
        #expect(state("42 (sleep) S 1 42 42 0 -1") == .running)
        #expect(state("42 (sleep) R 1") == .running)
        #expect(state("42 (sleep) D 1") == .running)
        #expect(state("42 (sleep) T 1") == .stopped)
        #expect(state("42 (sleep) t 1") == .stopped)
        #expect(state("42 (sleep) Z 1") == .gone)
        #expect(state("42 (evil) T (x) S 1") == .running)
        #expect(state("42 (a) S) T 1") == .stopped)
        #expect(state("42 (na\nme) T 1") == .stopped)
        #expect(state("42 (sleep)") == nil)
        #expect(state("42 sleep S") == nil)
        #expect(state("42 (sleep) 7 1") == nil)
        #expect(state("") == nil)
    }

    @Test func theStartTimeIsTheTwentySecondField() {
        func stat(_ start: String) -> [UInt8] {
            Array("42 (a) b) S \((4...52).map { $0 == 22 ? start : "\($0)" }.joined(separator: " "))".utf8)
        }
        #expect(ProcessIdentity.startTime(stat: stat("123456")) == 123_456)
        #expect(ProcessIdentity.startTime(stat: stat("1x")) == nil)
        #expect(ProcessIdentity.startTime(stat: Array("42 (a) S 1 2 3".utf8)) == nil)
    }

    @Test func aProcessIsKnownByItsPIDAndStartTime() throws {
        let me = try #require(ProcessIdentity.current(pid: getpid()))
        #expect(me.startTime > 0)
        #expect(ProcessRunState.read(me) == .running)
        // The same PID with another start time is another process: gone.
        #expect(ProcessRunState.read(ProcessIdentity(pid: me.pid, startTime: me.startTime + 1)) == .gone)
        #expect(ProcessIdentity.current(pid: 999_999_999) == nil)
    }

    @Test func aProcessIsReadFromProc() {
        #expect(ProcessRunState.read(pid: getpid()) == .running)
        // PIDs never go this high (pid_max is at most 2^22).
        #expect(ProcessRunState.read(pid: 999_999_999) == .gone)
        #expect(ControlGroup.group(ofProcess: 999_999_999) == nil)
    }
}
