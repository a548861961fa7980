import DBus
import Testing

/// Bytes from hexadecimal text (whitespace ignored).
func bytes(hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// The portal's `SettingChanged` signal `('org.freedesktop.appearance', 'accent-color',
/// <<(0.1, 0.2, 0.3)>>)`, big-endian, serial 99, as GLib's `GDBusMessage` marshals it.
let settingChangedBlob = bytes(hex: """
    4204010100000058000000630000007701016f000000001f2f6f72672f667265656465736b746f702f706f7274
    616c2f6465736b746f7000020173000000001f6f72672e667265656465736b746f702e706f7274616c2e536574
    74696e67730008016700037373760000000000000000030173000000000e53657474696e674368616e67656400
    000000001a6f72672e667265656465736b746f702e617070656172616e636500000000000c616363656e742d63
    6f6c6f72000176000528646464290000000000003fb999999999999a3fc999999999999a3fd3333333333333
    """)

/// An `UnknownMethod` error reply to serial 5, little-endian, as GLib marshals it.
let errorBlob = bytes(hex: """
    6c03010121000000080000005800000004017300280000006f72672e667265656465736b746f702e444275732e
    4572726f722e556e6b6e6f776e4d6574686f64000000000000000006017300040000003a312e37000000000801
    67000173000005017500050000001c0000004e6f2073756368206d6574686f6420e2809c52656164416c6ce280
    9d00
    """)

/// A `Notify` call (`susssasa{sv}i`) whose hints hold a Unix file descriptor in a variant
/// (`transient: <h 1>`), with no descriptors attached. Found by FuzzDBusMessage.
let fdInVariantBlob = bytes(hex: """
    6c010001b0000000070000009f00000001016f001e0000002f6f72672f667265656465736b746f702f4e6f7469
    6669636174696f6e730000020173001d0000006f72672e667265656465736b746f702e4e6f7469666963617469
    6f6e73000000060173001d0000006f72672e667265656465736b746f702e4e6f74696669636174696f6e730000
    00080167000d73757373736173617b73767d6900000000000003017300060000004e6f74696679000003000000
    61707000000000000400000069636f6e000000000700000053756d6d6172790008000000426f647920e29c9300
    000000150000000700000064656661756c7400040000004f70656e000000005300000000000000070000007572
    67656e63790001790002010000007800016900000000fbffffff090000007472616e7369656e74000168000000
    00010000000800000063617465676f727900017300060000006465766963650000ffffffff
    """)

@Suite("D-Bus messages in wire form")
struct DBusMessageWireTests {
    @Test func aSignalReadsWithItsHeaderAndArguments() throws {
        let message = try DBusMessage.demarshal(settingChangedBlob)
        #expect(message.kind == .signal)
        #expect(message.serial == 99)
        #expect(message.path == "/org/freedesktop/portal/desktop")
        #expect(message.interface == "org.freedesktop.portal.Settings")
        #expect(message.member == "SettingChanged")
        #expect(message.sender == nil && message.destination == nil && message.errorName == nil)
        #expect(message.signature == "ssv")
        #expect(message.firstStringArgument == "org.freedesktop.appearance")
        #expect(try message.arguments() == [
            .string("org.freedesktop.appearance"), .string("accent-color"),
            .variant(.variant(.structure([.double(0.1), .double(0.2), .double(0.3)]))),
        ])
    }

    @Test func anErrorReplyCarriesItsError() throws {
        let message = try DBusMessage.demarshal(errorBlob[...])
        #expect(message.kind == .error)
        #expect(message.destination == ":1.7")
        #expect(message.error() == DBusError(name: DBusError.Name.unknownMethod, message: "No such method “ReadAll”"))
    }

    @Test func marshalledAgainItReadsTheSame() throws {
        let message = try DBusMessage.demarshal(settingChangedBlob)
        let again = try DBusMessage.demarshal(try message.marshal())
        #expect(again.serial == 99 && again.member == "SettingChanged")
        #expect(try again.arguments() == message.arguments())
    }

    /// Found by FuzzDBusMessage: a double that is a NaN (here with payload bits) reads as that
    /// NaN, bit for bit, and stays it when marshalled again.
    @Test func aNaNDoubleKeepsItsBits() throws {
        let nanBits: UInt64 = 0xffff_ffff_8000_0000
        let blob = settingChangedBlob.replacing(
            [0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a], with: [0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0])
        for message in [try DBusMessage.demarshal(blob), try DBusMessage.demarshal(DBusMessage.demarshal(blob).marshal())] {
            let arguments = try message.arguments()
            guard case .variant(.variant(.structure(let fields))) = arguments.last, case .double(let first) = fields.first else {
                Issue.record("unexpected arguments \(arguments)")
                return
            }
            #expect(first.isNaN && first.bitPattern == nanBits)
            #expect(fields.dropFirst() == [.double(0.2), .double(0.3)])
        }
    }

    /// Found by FuzzDBusMessage: a descriptor can hide in a variant, where the message's
    /// signature does not show it; reading the arguments throws `NotSupported` (nothing to
    /// close), while the header and the first argument still read.
    @Test func aDescriptorInAVariantIsNotSupported() throws {
        let message = try DBusMessage.demarshal(fdInVariantBlob)
        #expect(message.kind == .methodCall && message.member == "Notify")
        #expect(message.signature == "susssasa{sv}i")
        #expect(message.firstStringArgument == "app")
        let error = #expect(throws: DBusError.self) { try message.arguments() }
        #expect(error?.name == DBusError.Name.notSupported)
    }

    @Test(arguments: [
        ("nothing", []),
        ("a truncated message", Array(settingChangedBlob.dropLast())),
        ("a message and one more byte", settingChangedBlob + [0]),
        ("two messages", errorBlob + errorBlob),
        ("an unknown byte order", [UInt8(ascii: "X")] + settingChangedBlob.dropFirst()),
        ("a signal without a member", settingChangedBlob.replacing([0x03, 0x01, 0x73], with: [0x07, 0x01, 0x73])),
        ("text", Array("hello, this is not a D-Bus message".utf8)),
    ] as [(String, [UInt8])])
    func invalidBytesThrow(_ what: String, _ blob: [UInt8]) {
        #expect(throws: DBusError.self, "\(what)") { try DBusMessage.demarshal(blob) }
    }
}
