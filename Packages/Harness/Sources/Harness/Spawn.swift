#if canImport(Glibc)
import Glibc
#endif

/// What becomes of one of the child's descriptors before it runs its program.
enum SpawnAction {
    /// A copy of this descriptor (of this process; or of the child's, set up before it).
    case copy(Int32)
    /// The file at this path, opened with these flags (created with mode 0644 if missing).
    case open(String, Int32)
}

/// Starts `executable` with `arguments` in `environment` (complete; `nil`: this process's) and
/// `workingDirectory`, its descriptors set up as `actions` says (child descriptor → action, in
/// ascending order), others inherited unless close-on-exec; returns its PID. Wraps `posix_spawn`.
///
/// The child starts with no signal blocked and the signals a test or benchmark process may catch
/// or ignore (`SIGTERM`, `SIGINT`, `SIGPIPE`, `SIGCHLD`, `SIGHUP`, `SIGUSR1`, `SIGUSR2`) at their
/// defaults.
func spawn(
    _ executable: String, _ arguments: [String], environment: [String: String]?, workingDirectory: String?,
    actions descriptorActions: [Int32: SpawnAction]
) throws(ChildProcessError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let workingDirectory {
        guard let addChdir = changeDirectoryAction() else {
            throw ChildProcessError("cannot start \(executable) in \(workingDirectory): the C library has no posix_spawn_file_actions_addchdir_np")
        }
        let result = addChdir(&actions, workingDirectory)
        guard result == 0 else { throw ChildProcessError("cannot start \(executable) in \(workingDirectory): \(String(cString: strerror(result)))") }
    }
    for (child, action) in descriptorActions.sorted(by: { $0.key < $1.key }) {
        switch action {
        // dup2 clears close-on-exec on the copy the child keeps.
        case .copy(let source): posix_spawn_file_actions_adddup2(&actions, source, child)
        case .open(let path, let flags): posix_spawn_file_actions_addopen(&actions, child, path, flags, 0o644)
        }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var emptyMask = sigset_t()
    sigemptyset(&emptyMask)
    posix_spawnattr_setsigmask(&attributes, &emptyMask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD, SIGHUP, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp ?? [] { free(pointer) }
    }
    var pid: pid_t = 0
    let result = if let envp { posix_spawn(&pid, executable, &actions, &attributes, argv, envp) } else {
        posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    }
    guard result == 0 else { throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(result)))") }
    return pid
}

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), which Swift's Glibc module
/// does not import; `nil` where the C library lacks it.
private func changeDirectoryAction() -> (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32)? {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)
}

/// A connected pair of `AF_UNIX` stream sockets, close-on-exec (so that no child another thread
/// starts inherits them).
func socketPair() throws(ChildProcessError) -> (ours: Int32, theirs: Int32) {
    var pair: [Int32] = [-1, -1]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &pair) == 0 else {
        throw ChildProcessError("socketpair: \(String(cString: strerror(errno)))")
    }
    return (pair[0], pair[1])
}
