#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The entries of a directory: the cgroups directly under another.
package enum DirectoryListing {
    /// The names of the subdirectories of `path` (`.` and `..` left out), in the order the file
    /// system gives them; empty when it cannot be read. Wraps `opendir` and `readdir`.
    package static func subdirectories(of path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
