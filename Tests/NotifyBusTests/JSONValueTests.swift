import NotifyBus
import Testing

@Suite struct JSONValueTests {
    @Test(arguments: [
        "null", "true", "false", "0", "-0", "1", "-17", "1.5", "1.0", "0.25", "1e+16", "[]", "{}",
        #"[1,"a",null,{"b":[true]}]"#, #"{"z":1,"a":2}"#, #""\"\\\n\u0001é""#,
    ])
    func roundTrips(text: String) throws {
        let value = try JSONValue(parsing: text)
        let again = try JSONValue(parsing: value.jsonText)
        #expect(again == value)
    }

    @Test func numbersKeepTheirForm() throws {
        #expect(try JSONValue(parsing: "1").jsonText == "1")
        #expect(try JSONValue(parsing: "1.0").jsonText == "1.0")
        #expect(try JSONValue(parsing: "0.8").jsonText == "0.8")
        #expect(try JSONValue(parsing: "1e3").jsonText == "1000.0")
        #expect(try JSONValue(parsing: "123456789012").jsonText == "123456789012")
        #expect(try JSONValue(parsing: "99999999999999999999").jsonText == "99999999999999999999")
        #expect(try JSONValue(parsing: "99999999999999999999") != .number(1e20))
    }

    @Test func objectsKeepOrderAndCompareWithoutIt() throws {
        let a = try JSONValue(parsing: #"{"b":1,"a":2}"#)
        let b = try JSONValue(parsing: #"{"a":2,"b":1.0}"#)
        #expect(a.jsonText == #"{"b":1,"a":2}"#)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(try JSONValue(parsing: #"{"a":1,"b":2,"a":3}"#).jsonText == #"{"a":3,"b":2}"#)
    }

    @Test func integersAndDoublesCompareByValue() {
        #expect(JSONValue.integer(1) == .number(1.0))
        #expect(JSONValue.integer(1).hashValue == JSONValue.number(1.0).hashValue)
        #expect(JSONValue.integer(1) != .number(1.5))
        #expect(JSONValue.bool(true) != .integer(1))
        #expect(JSONValue.null != .string("null"))
    }

    @Test func stringsEscapeWhatJSONRequires() throws {
        let s: JSONValue = .string("a\"b\\c\nd\u{1}é")
        #expect(s.jsonText == #""a\"b\\c\nd\u0001é""#)
        #expect(try JSONValue(parsing: #""\ud83d\ude00""#) == .string("😀"))
    }

    @Test(arguments: [
        ("", "unexpected end of text"), ("{", "unexpected end of text"), ("[1,]", "expected a value"),
        ("01", "leading zero"), ("1.", "after '.'"), ("tru", "unexpected end of text"), ("\"a", "end of text in a string"),
        ("{\"a\" 1}", "expected ':'"), ("1 2", "after the value"), ("\"\\x\"", "invalid escape"), ("NaN", "expected a value"),
        ("\"a\u{1}\"", "control character"),
    ])
    func badTextGivesAClearError(text: String, expected: String) {
        #expect {
            try JSONValue(parsing: text)
        } throws: { error in
            (error as? JSONParseError)?.message.contains(expected) == true
        }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(throws: Never.self) { try JSONValue(parsing: fine) }
    }
}
