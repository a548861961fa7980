import NotifyBus
import Testing

/// Numbers that neither `Int64` nor `Double` holds as written keep their text, and every
/// number compares by exact value.
@Suite struct JSONNumberTests {
    @Test(arguments: [
        "99999999999999999999", "-99999999999999999999", "18446744073709551616", "-9223372036854775809",
        "9223372036854775808", "123456789012345678901234567890123456789", "1e400", "-1e400", "1E400",
        "2.5e+400", "1e-400", "-1.5e-999", "1e99999999999999999999",
    ])
    func numbersPastInt64AndDoubleKeepTheirText(text: String) throws {
        let value = try JSONValue(parsing: text)
        guard case .decimal(let n) = value else {
            Issue.record("\(text) parsed as \(value)")
            return
        }
        #expect(n.text == text)
        #expect(value.jsonText == text)
        #expect(try JSONValue(parsing: "[\(text)]").jsonText == "[\(text)]")
        #expect(try JSONValue(parsing: value.jsonText) == value)
    }

    @Test func numbersWithinRangeKeepTheirCases() throws {
        #expect(try JSONValue(parsing: "9223372036854775807") == .integer(.max))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .integer(.min))
        #expect(try JSONValue(parsing: "9223372036854775807").jsonText == "9223372036854775807")
        #expect(try JSONValue(parsing: "1e308").jsonText == "1e+308")
        #expect(try JSONValue(parsing: "0e-400").jsonText == "0.0")
        #expect(try JSONValue(parsing: "5e-324").jsonText == "5e-324")
        #expect(try JSONValue(parsing: "-0").jsonText == "0")
    }

    @Test func bigNumbersCompareByExactValue() throws {
        let big = try JSONValue(parsing: "100000000000000000000")
        #expect(big == .number(1e20))
        #expect(big.hashValue == JSONValue.number(1e20).hashValue)
        #expect(try JSONValue(parsing: "99999999999999999999") != .number(1e20))
        #expect(try JSONValue(parsing: "18446744073709551616") == .number(0x1p64))
        #expect(try JSONValue(parsing: "18446744073709551615") != .number(0x1p64))
        #expect(try JSONValue(parsing: "-99999999999999999999") != JSONValue(parsing: "99999999999999999999"))
        #expect(try JSONValue(parsing: "1e400") == JSONValue(parsing: "10e399"))
        #expect(try JSONValue(parsing: "1e400").hashValue == JSONValue(parsing: "0.0001e404").hashValue)
        #expect(try JSONValue(parsing: "1e400") != JSONValue(parsing: "1e401"))
        #expect(try JSONValue(parsing: "1e400") != JSONValue(parsing: "-1e400"))
        #expect(try JSONValue(parsing: "1e-400") != JSONValue(parsing: "-1e-400"))
        #expect(try JSONValue(parsing: "1e-400") != .integer(0))
        #expect(try JSONValue(parsing: "1e99999999999999999999") == JSONValue(parsing: "10e99999999999999999998"))
        #expect(try JSONValue(parsing: "1e99999999999999999999") != JSONValue(parsing: "1e99999999999999999998"))
        #expect(try JSONValue(parsing: "-1e-99999999999999999999") == JSONValue(parsing: "-0.01e-99999999999999999997"))
    }

    @Test func aDecimalEqualsTheIntegerOrDoubleOfTheSameValue() throws {
        let hundred = JSONValue.decimal(try #require(JSONDecimal("1.00e2")))
        #expect(hundred == .integer(100))
        #expect(hundred.hashValue == JSONValue.integer(100).hashValue)
        let half = JSONValue.decimal(try #require(JSONDecimal("0.5")))
        #expect(half == .number(0.5))
        #expect(half.hashValue == JSONValue.number(0.5).hashValue)
        // The Double nearest 0.1 is not 0.1.
        #expect(JSONValue.decimal(try #require(JSONDecimal("0.1"))) != .number(0.1))
        let tiny = "4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625e-324"
        #expect(JSONValue.decimal(try #require(JSONDecimal(tiny))) == .number(.leastNonzeroMagnitude))
        #expect(JSONValue(UInt64.max).jsonText == "18446744073709551615")
        #expect(JSONValue(UInt64(7)) == .integer(7))
    }

    @Test(arguments: ["", "abc", "01", "1.", ".5", "1e", "+1", "1 ", "--1", "0x10", "1e+"])
    func aDecimalIsOneJSONNumber(text: String) {
        #expect(JSONDecimal(text) == nil)
    }

    @Test func aDecimalIsANumber() throws {
        let value = try JSONValue(parsing: "1e400")
        #expect(value.doubleValue == .infinity)
        #expect(try JSONValue(parsing: "99999999999999999999").doubleValue == 1e20)
        #expect(JSONDecimal("-0.5e+3")?.doubleValue == -500)
    }
}

/// Objects keep their members' order and look them up in constant time.
@Suite struct JSONObjectTests {
    @Test func aLargeObjectParsesAndComparesInLinearTime() throws {
        let count = 100_000
        var text = "{"
        var reversed = "{"
        for i in 0..<count {
            if i > 0 { text += ","; reversed += "," }
            text += "\"k\(i)\":\(i)"
            let j = count - 1 - i
            reversed += "\"k\(j)\":\(j)"
        }
        text += "}"
        reversed += "}"
        let clock = ContinuousClock()
        let start = clock.now
        let value = try JSONValue(parsing: text)
        let other = try JSONValue(parsing: reversed)
        #expect(value == other)
        #expect(value.hashValue == other.hashValue)
        let elapsed = clock.now - start
        // Linear lookup takes ~1.5 s here in a debug build (10 s on a machine loaded sevenfold);
        // quadratic lookup, ~5 billion key comparisons per object, takes minutes.
        #expect(elapsed < .seconds(60), "\(elapsed)")
        guard case .object(let object) = value else {
            Issue.record("not an object")
            return
        }
        #expect(object.count == count)
        #expect(object.keys.first == "k0")
        #expect(object[count - 1].key == "k\(count - 1)")
        #expect(object["k54321"] == .integer(54321))
        #expect(value.jsonText == text)
    }

    @Test func membersCanBeReplacedAndRemoved() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = "x"
        object["a"] = nil
        object["d"] = 4
        #expect(object.keys == ["b", "c", "d"])
        #expect(JSONValue.object(object).jsonText == #"{"b":"x","c":3,"d":4}"#)
        #expect(object != ["b": "x", "c": 3])
        #expect(object == ["d": 4, "c": 3.0, "b": "x"])
    }
}
