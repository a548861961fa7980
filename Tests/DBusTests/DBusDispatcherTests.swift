import DBus
import Testing

private let accessDenied = DBusError.Name.accessDenied
private let limitsExceeded = DBusError.Name.limitsExceeded

@Suite("Dispatch decided from the header, without a bus")
struct DBusDispatcherTests {
    @Test func anUnknownObjectIsRefusedWhateverIsSentAndItsBodyIsNotRead() throws {
        let dispatcher = try makeDispatcher(limits: .init(maximumBodySize: 64))
        let cases: [(ObjectPath, InterfaceName?, MemberName, [DBusValue])] = [
            ("/nothing", exampleCalc, "Add", [.int32(1), .int32(2)]),
            ("/nothing", "org.example.Nope", "Nope", [.string("x")]),
            ("/nothing", .properties, "Get", [.string("a.b"), .string("c")]),
            ("/nothing", nil, "Add", [.array(elementSignature: "y", Array(repeating: .byte(0), count: 1000))]),
            ("/things/3", exampleThing, "Poke", []),
            ("/things", exampleThing, "Poke", []),
            ("/calc/deeper", exampleCalc, "Add", [.int32(1), .int32(2)]),
        ]
        for (path, interface, member, arguments) in cases {
            let (outcome, body) = try dispatcher.outcome(":1.1", path, interface, member, arguments)
            #expect(outcome == .error(DBusError.Name.unknownObject), "\(path) \(member)")
            #expect(!body.wasRead, "\(path) \(member)")
        }
        // Introspecting a path that is no object nor a node on the way to one, too.
        #expect(try dispatcher.outcome(":1.1", "/nothing", .introspectable, "Introspect").outcome.errorName
            == DBusError.Name.unknownObject)
        #expect(try dispatcher.outcome(":1.1", "/things/3", .introspectable, "Introspect").outcome.errorName
            == DBusError.Name.unknownObject)
    }

    @Test func aRefusingAuthorizationDeniesEverythingButIntrospectionUnread() throws {
        let dispatcher = try makeDispatcher(limits: .init(maximumBodySize: 64))
        let big = DBusValue.array(elementSignature: "y", Array(repeating: .byte(1), count: 500))
        let cases: [(ObjectPath, InterfaceName?, MemberName, [DBusValue])] = [
            ("/private", exampleCalc, "Add", [.int32(1), .int32(2)]),
            ("/private", exampleCalc, "Add", [.string("wrong signature")]),
            ("/private", exampleCalc, "Add", [big]),
            ("/private", exampleCalc, "Nope", []),
            ("/private", "org.example.Nope", "Add", []),
            ("/private", nil, "Add", [.int32(1), .int32(2)]),
            ("/private", .properties, "Get", [.string(exampleCalc.rawValue), .string("Version")]),
            ("/private", .properties, "GetAll", [.string(exampleCalc.rawValue)]),
            ("/private", .properties, "Set", [.string(exampleCalc.rawValue), .string("Version"), .variant(.uint32(1))]),
            ("/private", .properties, "Nope", [big]),
            ("/things/2", exampleThing, "Poke", []),
            ("/things/2", exampleThing, "Nope", [big]),
            ("/things/2", .properties, "Get", [.string(exampleThing.rawValue), .string("Where")]),
            ("/things/2", .properties, "GetAll", [.string(exampleThing.rawValue)]),
        ]
        for (path, interface, member, arguments) in cases {
            let (outcome, body) = try dispatcher.outcome(":1.9", path, interface, member, arguments)
            #expect(outcome == .error(accessDenied), "\(path) \(member)")
            #expect(!body.wasRead, "\(path) \(member)")
        }
        // The owner of /things/2 is not the owner of /things/1.
        #expect(try dispatcher.outcome(":1.2", "/things/1", exampleThing, "Poke").outcome == .error(accessDenied))
        #expect(try dispatcher.outcome(":1.2", "/things/2", exampleThing, "Poke").outcome == .invoke("Poke", []))
        // Introspectable is open to everyone; Peer is libdbus's.
        for path: ObjectPath in ["/private", "/things/2"] {
            guard case .reply(let values) = try dispatcher.outcome(":1.9", path, .introspectable, "Introspect").outcome else {
                Issue.record("Introspect of \(path) was refused")
                continue
            }
            #expect(values.first?.stringValue?.contains("<interface name=\"org.freedesktop.DBus.Properties\">") == true)
        }
        #expect(try dispatcher.outcome(":1.9", "/private", .peer, "Ping").outcome == .notHandled)
    }

    @Test func interfaceThenMemberThenSizeThenSignatureThenArguments() throws {
        let dispatcher = try makeDispatcher(
            limits: .init(maximumBodySize: 64, limitsExceeded: "org.notifybus.Error.LimitsExceeded"))
        let big = DBusValue.array(elementSignature: "y", Array(repeating: .byte(1), count: 100))
        func outcome(_ interface: InterfaceName?, _ member: MemberName, _ arguments: [DBusValue]) throws -> Outcome {
            try dispatcher.outcome(":1.1", "/private", interface, member, arguments).outcome
        }
        #expect(try outcome("org.example.Nope", "Add", [big]) == .error(DBusError.Name.unknownInterface))
        #expect(try outcome(exampleCalc, "Nope", [big]) == .error(DBusError.Name.unknownMethod))
        #expect(try outcome(nil, "Nope", [big]) == .error(DBusError.Name.unknownMethod))
        #expect(try outcome(.properties, "Nope", [big]) == .error(DBusError.Name.unknownMethod))
        #expect(try outcome(.introspectable, "Nope", [big]) == .error(DBusError.Name.unknownMethod))
        // An oversized call to a defined member: the size is checked before the signature.
        for (interface, member) in [(exampleCalc, "Add"), (exampleCalc, "Count"), (.properties, "Get"), (.introspectable, "Introspect")] as [(InterfaceName, MemberName)] {
            #expect(try outcome(interface, member, [big]) == .error("org.notifybus.Error.LimitsExceeded"), "\(member)")
        }
        #expect(try outcome(exampleCalc, "Add", [.string("x")]) == .error(DBusError.Name.invalidArgs))
        #expect(try outcome(exampleCalc, "Add", [.int32(1)]) == .error(DBusError.Name.invalidArgs))
        #expect(try outcome(.properties, "Get", [.string("x")]) == .error(DBusError.Name.invalidArgs))
        #expect(try outcome(.introspectable, "Introspect", [.string("x")]) == .error(DBusError.Name.invalidArgs))
        #expect(try outcome(exampleCalc, "Add", [.int32(2), .int32(40)]) == .invoke("Add", [.int32(2), .int32(40)]))
        #expect(try outcome(nil, "Add", [.int32(2), .int32(40)]) == .invoke("Add", [.int32(2), .int32(40)]))
        // The size is checked, then nothing is decoded.
        let (oversized, body) = try dispatcher.outcome(":1.1", "/calc", exampleCalc, "Count", [big])
        #expect(oversized.errorName == "org.notifybus.Error.LimitsExceeded")
        #expect(body.sizeReads == 1 && body.decodes == 0 && body.countReads == 0)
        let (wrong, wrongBody) = try dispatcher.outcome(":1.1", "/calc", exampleCalc, "Add", [.string("x")])
        #expect(wrong.errorName == DBusError.Name.invalidArgs && wrongBody.decodes == 0)
    }

    @Test func theBodySizeIsTheMarshalledLengthFoundWithoutDecoding() throws {
        let samples: [[DBusValue]] = [
            [],
            [.byte(7)],
            [.byte(7), .int64(-1)],
            [.boolean(true), .int16(2), .uint16(3), .double(0.5), .uint64(9)],
            [.string(""), .string("héllo"), .objectPath("/a/b"), .signature("a{sv}")],
            [.byte(1), .array(elementSignature: "x", [])],
            [.byte(1), .array(elementSignature: "y", (0..<13).map { .byte(UInt8($0)) }), .int32(5)],
            [.strings(["a", "bb", "ccc"]), .vardict([("k", .structure([.byte(1), .double(2)])), ("e", .strings([]))])],
            [.structure([.byte(1), .structure([.string("x"), .int64(2)]), .variant(.array(elementSignature: "x", [.int64(1)]))])],
            [.variant(.variant(.structure([.byte(3), .uint64(4)]))), .byte(2), .variant(.string("tail"))],
            [.array(elementSignature: "(ss)", [.structure([.string("k"), .string("v")])]), .dictionary(keySignature: "u", valueSignature: "ay", [])],
        ]
        for arguments in samples {
            let message = try DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "M", arguments: arguments)
            #expect(message.bodySize == (try wireBodyLength(message)), "\(message.signature)")
        }
        // A large array is sized from its length field: 4 + 1,000,000 bytes, then the string.
        let large = try DBusMessage.demarshal(largeByteArrayCall(count: 1_000_000))
        #expect(large.bodySize == 1_000_010)
        #expect(large.bodySize == (try wireBodyLength(large)))
        #expect(large.elementCount(ofArgument: 0) == 1_000_000)
        #expect(large.elementCount(ofArgument: 1) == nil)
    }

    @Test func budgetsStopDecodingWithTheConfiguredName() throws {
        let name: ErrorName = "org.notifybus.Error.LimitsExceeded"
        let dispatcher = try makeDispatcher(limits: .init(limitsExceeded: name))
        func subscribe(_ patterns: [String], _ options: [(String, DBusValue)] = []) throws -> Outcome {
            try dispatcher.outcome(":1.5", "/calc", exampleCalc, "Subscribe", [.strings(patterns), .vardict(options)]).outcome
        }
        // Subscribe's budget: 40 values, 4 levels, 200 bytes of text.
        #expect(try subscribe(["a", "b"], [("limit", .uint32(3))]) == .invoke("Subscribe", [.strings(["a", "b"]), .vardict([("limit", .uint32(3))])]))
        #expect(try subscribe(["a"], (0..<12).map { ("k\($0)", .uint32(1)) }) == .error(name.rawValue))  // 1 + 2 + 1 + 12 × 4 values
        #expect(try subscribe([String(repeating: "x", count: 201)]) == .error(name.rawValue))
        #expect(try subscribe([String(repeating: "x", count: 200)]) != .error(name.rawValue))
        #expect(try subscribe([], [("deep", .variant(.variant(.variant(.string("x")))))]) == .error(name.rawValue))
        #expect(try subscribe([], [("shallow", .string("x"))]) != .error(name.rawValue))

        // The decoder alone: values, depth, text; an array of a fixed type is counted whole.
        let message = try DBusMessage.methodCall(
            destination: nil, path: "/", interface: nil, member: "M",
            arguments: [.array(elementSignature: "u", (0..<100).map { .uint32($0) }), .strings(["ab", "cd"])])
        #expect(throws: DBusError(name: name.rawValue, message: "the arguments hold more values than the budget allows")) {
            try message.arguments(within: DBusDecodingBudget(values: 100, depth: 8, stringBytes: 100), limitsExceeded: name)
        }
        #expect(try message.arguments(within: DBusDecodingBudget(values: 104, depth: 1, stringBytes: 4), limitsExceeded: name).count == 2)
        #expect(throws: DBusError.self) {
            try message.arguments(within: DBusDecodingBudget(values: 104, depth: 0, stringBytes: 4), limitsExceeded: name)
        }
        #expect(throws: DBusError.self) {
            try message.arguments(within: DBusDecodingBudget(values: 104, depth: 1, stringBytes: 3), limitsExceeded: name)
        }
        #expect(DBusDecodingBudget(bodyLimit: 128 * 1024) == DBusDecodingBudget(values: 16_384, depth: 32, stringBytes: 131_072))
    }

    @Test func aPrecheckRefusesFromElementCountsBeforeDecoding() throws {
        let dispatcher = try makeDispatcher()
        let (refused, body) = try dispatcher.outcome(
            ":1.5", "/calc", exampleCalc, "Subscribe", [.strings((0..<9).map { "p\($0)" }), .vardict([])])
        #expect(refused == .error("org.example.Error.TooMany"))
        #expect(body.countReads == 1 && body.decodes == 0)
        let (accepted, acceptedBody) = try dispatcher.outcome(
            ":1.5", "/calc", exampleCalc, "Subscribe", [.strings((0..<8).map { "p\($0)" }), .vardict([])])
        #expect(accepted != .error("org.example.Error.TooMany"))
        #expect(acceptedBody.decodes == 1)
    }

    @Test func propertiesAreAnsweredFromTheTables() throws {
        let dispatcher = try makeDispatcher()
        func properties(_ member: MemberName, _ arguments: [DBusValue], path: ObjectPath = "/calc", from sender: BusName = ":1.1") throws -> Outcome {
            try dispatcher.outcome(sender, path, .properties, member, arguments).outcome
        }
        #expect(try properties("Get", [.string(exampleCalc.rawValue), .string("Version")]) == .reply([.variant(.uint32(2))]))
        #expect(try properties("GetAll", [.string(exampleCalc.rawValue)])
            == .reply([.vardict([("Version", .uint32(2)), ("Name", .string("calc"))])]))
        #expect(try properties("Get", [.string(exampleCalc.rawValue), .string("Nope")]) == .error(DBusError.Name.unknownProperty))
        #expect(try properties("Get", [.string("org.example.Nope"), .string("Version")]) == .error(DBusError.Name.unknownInterface))
        #expect(try properties("Set", [.string(exampleCalc.rawValue), .string("Version"), .variant(.uint32(3))])
            == .error(DBusError.Name.propertyReadOnly))
        #expect(try properties("Set", [.string(exampleCalc.rawValue), .string("Nope"), .variant(.uint32(3))])
            == .error(DBusError.Name.unknownProperty))
        #expect(try properties("Get", [.string(exampleCalc.rawValue)]) == .error(DBusError.Name.invalidArgs))
        // Without an interface, Get is Properties.Get.
        #expect(try dispatcher.outcome(":1.1", "/calc", nil, "Get", [.string(exampleCalc.rawValue), .string("Version")]).outcome
            == .reply([.variant(.uint32(2))]))
        // A subtree's property value comes from the object's path.
        #expect(try properties("Get", [.string(exampleThing.rawValue), .string("Where")], path: "/things/2", from: ":1.2")
            == .reply([.variant(.string("/things/2"))]))
    }

    @Test func subtreesResolveIntrospectAndGiveWayToExactObjects() throws {
        var dispatcher = try makeDispatcher()
        func introspect(_ path: ObjectPath) throws -> String? {
            guard case .reply(let values) = try dispatcher.outcome(":1.9", path, .introspectable, "Introspect").outcome else {
                return nil
            }
            return values.first?.stringValue
        }
        let root = try #require(try introspect("/"))
        for child in ["calc", "private", "things"] { #expect(root.contains("<node name=\"\(child)\"/>")) }
        let prefix = try #require(try introspect("/things"))
        #expect(prefix.contains("<node name=\"1\"/>") && prefix.contains("<node name=\"2\"/>"))
        #expect(!prefix.contains(exampleThing.rawValue))
        let object = try #require(try introspect("/things/1"))
        #expect(object.contains("<interface name=\"org.example.Thing1\">"))
        #expect(object.contains("<method name=\"Poke\"/>"))
        #expect(object.contains("<property name=\"Where\" type=\"s\" access=\"read\">"))

        // An exact object below the prefix takes precedence, and so does a deeper subtree.
        try dispatcher.add(DBusObject(path: "/things/1", interfaces: [DBusInterface(
            name: "org.example.Exact1", methods: [DBusMethod("Hello") { _ in }])]))
        #expect(try dispatcher.outcome(":1.9", "/things/1", "org.example.Exact1", "Hello").outcome == .invoke("Hello", []))
        try dispatcher.add(DBusSubtree(
            prefix: "/things/2/parts", interfaces: [DBusInterface(name: "org.example.Part1", methods: [DBusMethod("Part") { _ in }])],
            resolve: { $0 == "/things/2/parts/a" }, enumerate: { ["/things/2/parts/a"] }))
        #expect(try dispatcher.outcome(":1.9", "/things/2/parts/a", "org.example.Part1", "Part").outcome == .invoke("Part", []))
        // What the deeper subtree does not resolve is not an object of the shallower one either.
        #expect(try dispatcher.outcome(":1.2", "/things/2/parts/b", exampleThing, "Poke").outcome
            == .error(DBusError.Name.unknownObject))
        #expect(try introspect("/things/2")?.contains("<node name=\"parts\"/>") == true)
        #expect(throws: DBusError.self) { try dispatcher.add(DBusObject(path: "/calc", interfaces: [])) }
        dispatcher.removeSubtree(at: "/things")
        #expect(try dispatcher.outcome(":1.2", "/things/2", exampleThing, "Poke").outcome == .error(DBusError.Name.unknownObject))
    }
}

/// A method call whose one argument is an `ay` of `count` bytes, then an `s`, in its wire
/// form, made without building a `DBusValue` per byte.
func largeByteArrayCall(count: Int, path: String = "/big", member: String = "Count") -> [UInt8] {
    var fields: [UInt8] = []
    func align(_ bytes: inout [UInt8], _ to: Int) { while bytes.count % to != 0 { bytes.append(0) } }
    func u32(_ value: Int, _ bytes: inout [UInt8]) { bytes += withUnsafeBytes(of: UInt32(value).littleEndian, Array.init) }
    func field(_ code: UInt8, _ type: Character, _ text: String) {
        align(&fields, 8)
        fields += [code, 1, UInt8(type.asciiValue!), 0]
        if type == "g" {
            fields.append(UInt8(text.utf8.count))
        } else {
            u32(text.utf8.count, &fields)
        }
        fields += Array(text.utf8) + [0]
    }
    field(1, "o", path)
    field(3, "s", member)
    field(8, "g", "ays")
    var body: [UInt8] = []
    u32(count, &body)
    body += [UInt8](repeating: 0x5a, count: count)
    align(&body, 4)
    u32(1, &body)
    body += [UInt8(ascii: "x"), 0]
    var message: [UInt8] = [UInt8(ascii: "l"), 1, 0, 1]
    u32(body.count, &message)
    u32(1, &message)
    u32(fields.count, &message)
    message += fields
    align(&message, 8)
    return message + body
}
