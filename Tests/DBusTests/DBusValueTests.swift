import DBus
import TestSupport
import Testing

/// A value of every kind, nested.
let everyKind: [DBusValue] = [
    .byte(255), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535), .int32(-7), .uint32(4_000_000_000),
    .int64(Int64.min), .uint64(UInt64.max), .double(-0.25), .string("grüße ✓"), .objectPath("/org/example/a_b"),
    .signature("a{sv}"),
    .strings(["a", "", "c"]),
    .array(elementSignature: "i", []),
    .array(elementSignature: "ay", [.array(elementSignature: "y", [.byte(1), .byte(2)])]),
    .vardict([("color-scheme", .uint32(1)), ("accent", .structure([.double(0.1), .double(0.2), .double(0.3)]))]),
    .dictionary(keySignature: "u", valueSignature: "as", [
        DBusDictionaryEntry(key: .uint32(1), value: .strings(["x"])),
    ]),
    .dictionary(keySignature: "s", valueSignature: "a{sv}", []),
    .structure([.string("s"), .structure([.int32(1), .variant(.variant(.string("double-wrapped")))])]),
    .variant(.array(elementSignature: "(sv)", [.structure([.string("k"), .variant(.boolean(true))])])),
]

@Suite("D-Bus values")
struct DBusValueTests {
    @Test func signaturesDescribeTheValues() {
        #expect(DBusValue.vardict([]).signature == "a{sv}")
        #expect(DBusValue.structure([.double(1), .double(2), .double(3)]).signature == "(ddd)")
        #expect(DBusValue.array(elementSignature: "a{sv}", []).signature == "aa{sv}")
        #expect(DBusValue.variant(.uint32(0)).signature == "v")
        #expect(everyKind.map(\.signature).joined() == "ybbnqiuxtdsogasaiaaya{sv}a{uas}a{sa{sv}}(s(iv))v")
    }

    @Test func accessorsSeeThroughVariants() {
        #expect(DBusValue.variant(.variant(.uint32(2))).int64Value == 2)
        #expect(DBusValue.variant(.string("x")).stringValue == "x")
        #expect(DBusValue.variant(.boolean(true)).boolValue == true)
        #expect(DBusValue.int32(3).doubleValue == 3)
        #expect(DBusValue.string("3").doubleValue == nil)
        #expect(DBusValue.uint64(UInt64.max).int64Value == nil)
        #expect(DBusValue.strings(["a"]).stringArray == ["a"])
        #expect(DBusValue.array(elementSignature: "i", [.int32(1)]).stringArray == nil)
        #expect(DBusValue.vardict([("a", .int32(1))]).stringKeyedDictionary == ["a": .variant(.int32(1))])
    }

    @Test func invalidValuesAreRejectedWithClearErrors() {
        #expect(throws: DBusError.self) { try DBusValue.array(elementSignature: "s", [.int32(1)]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.objectPath("not/a/path").validate() }
        #expect(throws: DBusError.self) { try DBusValue.signature("a{").validate() }
        #expect(throws: DBusError.self) { try DBusValue.structure([]).validate() }
        #expect(throws: DBusError.self) { try DBusValue.string("nul\u{0}inside").validate() }
        #expect(throws: DBusError.self) {
            try DBusValue.dictionary(keySignature: "as", valueSignature: "s", []).validate()
        }
        do {
            try DBusValue.array(elementSignature: "s", [.int32(1)]).validate()
        } catch {
            #expect(error.name == DBusError.Name.invalidArgs)
            #expect(error.message.contains("array of 's' holds a 'i'"))
        }
        for value in everyKind { #expect(throws: Never.self) { try value.validate() } }
    }

    /// An array's or a dictionary's elements are checked against its element signature: every
    /// value of every kind fits the signature it has and no other.
    @Test func elementsMustHaveTheElementSignature() {
        let signatures = Set(everyKind.map(\.signature) + ["a{ss}", "a{uv}", "aa{sv}", "a{sas}", "as", "ai", "(ss)", "(s)", "a(sv)", "ax"])
        for value in everyKind {
            for signature in signatures {
                let fits = value.signature == signature
                let array = DBusValue.array(elementSignature: signature, [value])
                let dictionary = DBusValue.dictionary(
                    keySignature: "s", valueSignature: signature, [DBusDictionaryEntry(key: .string("k"), value: value)])
                #expect(((try? array.validate()) != nil) == fits, "\(value.signature) in a\(signature)")
                #expect(((try? dictionary.validate()) != nil) == fits, "\(value.signature) in a{s\(signature)}")
            }
        }
    }

    @Test func aNULIsFoundInStringsOfEveryLength() {
        for text in ["", "short", "a string longer than fifteen bytes, so not a small string", "grüße ✓ über fünfzehn Bytes"] {
            #expect(throws: Never.self) { try DBusValue.string(text).validate() }
            for position in [0, text.count / 2, text.count] {
                var withNUL = text
                withNUL.insert("\u{0}", at: withNUL.index(withNUL.startIndex, offsetBy: position))
                #expect(throws: DBusError.self) { try DBusValue.string(withNUL).validate() }
                #expect(!DBusNames.isValidObjectPath("/a" + withNUL))
            }
        }
    }

    @Test func singleCompleteTypesOfOneCode() {
        for code in "ybnqiuxtdsoghv" { #expect(DBusSignatures.isSingleCompleteType(String(code)), "\(code)") }
        for code in "a({})rez" { #expect(!DBusSignatures.isSingleCompleteType(String(code)), "\(code)") }
        #expect(DBusSignatures.isSingleCompleteType("a{sv}"))
        #expect(!DBusSignatures.isSingleCompleteType("ss"))
        #expect(!DBusSignatures.isSingleCompleteType(""))
        // A code that is no type is refused, not passed to libdbus (whose check aborts).
        #expect(!DBusSignatures.isBasicType("z"))
        #expect(throws: DBusError.self) { try DBusValue.dictionary(keySignature: "z", valueSignature: "s", []).validate() }
    }

    @Test func addressesHonourTheEnvironment() throws {
        let env = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/tmp/x", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/y"]
        #expect(try DBusAddress.system.resolve(environment: { env[$0] }) == "unix:path=/tmp/x")
        #expect(try DBusAddress.session.resolve(environment: { env[$0] }) == "unix:path=/tmp/y")
        #expect(try DBusAddress.system.resolve(environment: { _ in nil }) == DBusAddress.defaultSystemBusAddress)
        #expect(throws: DBusError.self) { try DBusAddress.session.resolve(environment: { _ in nil }) }
        #expect(try DBusAddress.address("unix:path=/z").resolve(environment: { _ in nil }) == "unix:path=/z")
    }

    @Test func matchRulesAreQuotedForTheBus() {
        let rule = DBusMatchRule.propertiesChanged(
            sender: "net.hadess.SensorProxy", path: "/net/hadess/SensorProxy", interface: "net.hadess.SensorProxy")
        #expect(rule.text == "type='signal',sender='net.hadess.SensorProxy',path='/net/hadess/SensorProxy',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='net.hadess.SensorProxy'")
        #expect(DBusMatchRule(arg0: "it's").text == "type='signal',arg0='it'\\''s'")
    }
}
