#if canImport(Glibc)
import Glibc
#endif

/// A test companion that did not behave (or could not be started).
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// This process's environment with `changes` applied (`nil` removes a variable).
public func environment(with changes: [String: String?]) -> [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let text = String(cString: pointer)
        if let equals = text.firstIndex(of: "=") {
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        entry += 1
    }
    for (name, value) in changes { result[name] = value }
    return result
}

/// Where one of a child's descriptors comes from.
enum ChildDescriptor {
    /// A copy of one of ours.
    case copy(Int32)
    /// A file opened for reading.
    case read(String)
    /// A file opened for appending (created if missing).
    case append(String)
}

/// Starts `executable` with `arguments` in `environment` (complete, not merged), its descriptors
/// set up as `descriptors` says (child descriptor → source) in ascending order, others
/// inherited unless close-on-exec; returns its PID. Wraps `posix_spawn`.
///
/// The child starts with a clean signal state, as from a shell: nothing blocked, and the signals
/// a test process may catch or ignore (`SIGPIPE`, the ones tests send) at their defaults.
func spawnChild(
    _ executable: String, _ arguments: [String], environment: [String: String],
    descriptors: [Int32: ChildDescriptor]
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (child, source) in descriptors.sorted(by: { $0.key < $1.key }) {
        switch source {
        // dup2 clears close-on-exec on the copy the child keeps.
        case .copy(let ours): posix_spawn_file_actions_adddup2(&actions, ours, child)
        case .read(let path): posix_spawn_file_actions_addopen(&actions, child, path, O_RDONLY, 0)
        case .append(let path): posix_spawn_file_actions_addopen(&actions, child, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
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
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
    guard result == 0 else { throw HarnessError("posix_spawn \(executable): errno \(result)") }
    return pid
}

/// A connected pair of `AF_UNIX` stream sockets, close-on-exec (so that no child a parallel test
/// spawns inherits them).
func socketPair() throws -> (ours: Int32, theirs: Int32) {
    var pair: [Int32] = [-1, -1]
    let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { throw HarnessError("socketpair: errno \(errno)") }
    return (pair[0], pair[1])
}
