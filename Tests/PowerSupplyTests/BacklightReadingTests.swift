import NotifyBus
import NotifyBusSources
import Testing

/// Reads a backlight made of these attributes.
private func reading(_ attributes: [String: String]) throws(BacklightReading.Problem) -> BacklightReading {
    try BacklightReading(name: "intel_backlight") { attributes[$0] }
}

/// The problem reading these attributes gives, or `nil` when it gives a brightness.
private func problem(_ attributes: [String: String]) -> String? {
    do {
        _ = try reading(attributes)
        return nil
    } catch {
        return error.description
    }
}

@Suite("BacklightReading (the specification's mapping of source keys)")
struct BacklightReadingTests {
    @Test func actualBrightnessOverMaximum() throws {
        let read = try reading(["max_brightness": "96000", "actual_brightness": "24000", "brightness": "48000"])
        #expect(read.brightness == 0.25)
        #expect(read.key == "display/intel_backlight/brightness")
        #expect(read.values.map(\.key) == ["display/intel_backlight/brightness"])
        #expect(read.values.map(\.value) == [.number(0.25)])
    }

    @Test(arguments: [
        (nil, "3"), ("", "3"), ("n/a", "3"), ("nan", "3"), ("inf", "3"),
    ] as [(String?, String)])
    func brightnessStandsInForAMissingOrUnreadableActualBrightness(actual: String?, brightness: String) throws {
        var attributes = ["max_brightness": "12", "brightness": brightness]
        attributes["actual_brightness"] = actual
        #expect(try reading(attributes).brightness == 0.25)
    }

    @Test func valuesAreTrimmedAndClamped() throws {
        #expect(try reading(["max_brightness": " 100\n", "actual_brightness": "50\n"]).brightness == 0.5)
        #expect(try reading(["max_brightness": "100", "actual_brightness": "250"]).brightness == 1)
        #expect(try reading(["max_brightness": "100", "actual_brightness": "-5"]).brightness == 0)
    }

    @Test func unusableDevicesSayWhy() {
        #expect(problem(["actual_brightness": "3"]) == "no readable max_brightness")
        #expect(problem(["max_brightness": "0", "actual_brightness": "0"]) == "max_brightness is 0")
        #expect(problem(["max_brightness": "-1", "actual_brightness": "0"]) == "max_brightness is -1")
        #expect(problem(["max_brightness": "many", "actual_brightness": "3"]) == #"max_brightness is not a number: "many""#)
        #expect(problem(["max_brightness": "10", "brightness": "dim"]) == #"brightness is not a number: "dim""#)
        #expect(problem(["max_brightness": "10"]) == "neither actual_brightness nor brightness is readable")
    }
}
