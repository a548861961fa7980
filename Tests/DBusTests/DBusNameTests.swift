import DBus
import Testing

@Suite("Typed D-Bus names")
struct DBusNameTests {
    @Test func busNamesFollowTheSpecification() throws {
        for valid in [":1.42", "org.freedesktop.DBus", "org.freedesktop.locale1", "a.b", "_a.b-c", ":1.a-b_c"] {
            #expect(BusName(rawValue: valid)?.rawValue == valid)
        }
        for invalid in ["", "org", ".a.b", "a..b", "1a.b", "a.b.", "a b.c", "a.b\u{0}", String(repeating: "a.", count: 128) + "a"] {
            #expect(BusName(rawValue: invalid) == nil, "\(invalid)")
            #expect(throws: DBusError.self) { try BusName(validating: invalid) }
        }
        #expect((try BusName(validating: ":1.7")).isUnique)
        #expect(!BusName.bus.isUnique)
    }

    @Test func objectPathsFollowTheSpecification() {
        for valid in ["/", "/a", "/org/freedesktop/locale1", "/a_b/C9"] {
            #expect(ObjectPath(rawValue: valid)?.rawValue == valid)
        }
        for invalid in ["", "a", "/a/", "//", "/a//b", "/a-b", "/a.b", "/ä"] {
            #expect(ObjectPath(rawValue: invalid) == nil, "\(invalid)")
        }
    }

    @Test func interfaceMemberAndErrorNamesFollowTheSpecification() {
        for valid in ["org.freedesktop.DBus.Properties", "a.b", "_a.B_9"] {
            #expect(InterfaceName(rawValue: valid) != nil, "\(valid)")
            #expect(ErrorName(rawValue: valid) != nil, "\(valid)")
        }
        for invalid in ["", "a", "a..b", "1a.b", "a.b-c", ":1.2", "a.b."] {
            #expect(InterfaceName(rawValue: invalid) == nil, "\(invalid)")
            #expect(ErrorName(rawValue: invalid) == nil, "\(invalid)")
        }
        for valid in ["GetAll", "PropertiesChanged", "_x", "a9"] {
            #expect(MemberName(rawValue: valid) != nil, "\(valid)")
        }
        for invalid in ["", "9a", "a.b", "a-b", "a b", String(repeating: "a", count: 256)] {
            #expect(MemberName(rawValue: invalid) == nil, "\(invalid)")
        }
    }

    @Test func literalsAndCheckedValuesAreTheSameName() throws {
        let literal: InterfaceName = "org.freedesktop.DBus.Properties"
        #expect(literal == InterfaceName.properties)
        #expect(try InterfaceName(validating: "org.freedesktop.DBus.Properties") == literal)
        #expect(literal.description == "org.freedesktop.DBus.Properties")
        do {
            _ = try MemberName(validating: "not-a-member")
            Issue.record("accepted an invalid member name")
        } catch {
            #expect(error.name == DBusError.Name.invalidArgs)
            #expect(error.message.contains("member name"))
        }
    }
}
