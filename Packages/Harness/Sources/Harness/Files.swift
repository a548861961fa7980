#if canImport(Glibc)
public import Glibc
#endif

/// A new directory under /tmp, removed by `removeTree`.
public func makeTemporaryDirectory(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp: errno \(errno)") }
    let path = String(cString: made)
    chmod(path, 0o755)
    return path
}

/// A new directory under /tmp for a program that runs as `owner` (a compositor's
/// `XDG_RUNTIME_DIR`: mode 0700, owned by that user), removed by `removeTree`.
public func makeRuntimeDirectory(_ prefix: String, owner: (uid: uid_t, gid: gid_t)) throws -> String {
    let directory = try makeTemporaryDirectory(prefix)
    guard chown(directory, owner.uid, owner.gid) == 0, chmod(directory, 0o700) == 0 else {
        let code = errno
        removeTree(directory)
        throw HarnessError("cannot give \(directory) to uid \(owner.uid): errno \(code)")
    }
    return directory
}

/// Throws `HarnessError` naming the first of `programs` (paths) that is missing.
public func requirePrograms(_ programs: [String]) throws {
    for program in programs where access(program, X_OK) != 0 { throw HarnessError("\(program) is missing") }
}

/// Removes `path` and everything below it (only paths under /tmp/).
public func removeTree(_ path: String) {
    guard path.hasPrefix("/tmp/"), !path.contains("..") else { return }
    if let directory = opendir(path) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            var info = stat()
            if lstat(child, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                removeTree(child)
            } else {
                unlink(child)
            }
        }
        closedir(directory)
    }
    rmdir(path)
}

/// Writes `text` to `path` (replacing it).
public func writeFile(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw HarnessError("open \(path): errno \(errno)") }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw HarnessError("write \(path): errno \(errno)") }
        offset += n
    }
}

/// The contents of `path`, or `nil`.
public func readFile(_ path: String) -> String? { ProcessStats.readText(path) }

/// A new empty file under /tmp (for the caller to remove).
public func makeTemporaryFile(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw HarnessError("mkstemp: errno \(errno)") }
    close(fd)
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
