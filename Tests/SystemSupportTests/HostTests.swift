import SystemSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct HostTests {
    @Test func errnoValuesInWords() {
        #expect(ErrnoText.of(ENOENT) == "No such file or directory")
        #expect(ErrnoText.of(EACCES) == "Permission denied")
        #expect(ErrnoText.of(99_999).contains("99999"))
    }

    @Test func thisMachinesName() {
        var buffer = [CChar](repeating: 0, count: 256)
        let expected = gethostname(&buffer, 255) == 0 && buffer[0] != 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : "localhost"
        #expect(HostName.current == expected)
        #expect(!HostName.current.isEmpty)
    }

    @Test(arguments: [("127.0.0.1", true), ("::1", true), ("fe80::1", true), ("localhost", false), ("1.2.3", false)])
    func numericAddressesNeedNoLookup(host: String, numeric: Bool) {
        #expect(HostLookup.isNumeric(host) == numeric)
    }

    /// The outcome of looking `host` up, and whether the completion ran on a thread other than
    /// the caller's.
    private func lookUp(_ host: String) async -> (failure: HostLookup.Failure?, elsewhere: Bool) {
        let caller = UInt(pthread_self())
        return await withCheckedContinuation { continuation in
            HostLookup.resolve(host) { failure in
                continuation.resume(returning: (failure, UInt(pthread_self()) != caller))
            }
        }
    }

    @Test func looksNamesUpOnAThreadOfItsOwn() async {
        let found = await lookUp("localhost")
        #expect(found.failure == nil)
        #expect(found.elsewhere)
        let missing = await lookUp("no-such-host.invalid")
        guard case .unresolved(let code) = missing.failure else {
            Issue.record("no-such-host.invalid: \(String(describing: missing.failure))")
            return
        }
        #expect(code != 0)
        #expect(missing.failure?.reason == String(cString: gai_strerror(code)))
        #expect(missing.elsewhere)
    }
}
