public import NotifyBus

/// What one `backlight` device says, mapped onto the specification's `display/<name>/brightness`.
///
/// `<name>` is the device's kernel name (`intel_backlight`, `acpi_video0`). The brightness is a
/// number from 0.0 to 1.0: the sysfs attribute `actual_brightness` (what the hardware reports)
/// over `max_brightness`, or `brightness` (the level last requested) over `max_brightness` when
/// `actual_brightness` is missing or unreadable (some drivers fail to read it, and an
/// unreadable value is also one that is not a number); clamped to 0…1.
///
/// A device is skipped (`Problem`) when `max_brightness` is missing, not a number, or not above
/// 0, or when neither `actual_brightness` nor `brightness` is a number.
public struct BacklightReading: Sendable, Hashable {
    /// Why a device gives no brightness.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, e.g. `max_brightness is 0`.
        public var description: String

        /// Creates a problem that says `description`.
        public init(_ description: String) { self.description = description }
    }

    /// The device's kernel name, the `<name>` in its key.
    public var name: String
    /// The brightness, 0…1.
    public var brightness: Double

    /// Creates a reading from its parts.
    public init(name: String, brightness: Double) {
        self.name = name
        self.brightness = brightness
    }

    /// Reads a device through `attribute`, which returns a sysfs attribute's text, or `nil`
    /// when the device has no such readable attribute.
    /// - Throws: `Problem` when the device gives no brightness (see the type's summary).
    public init(name: String, attribute: (String) -> String?) throws(Problem) {
        guard let maxText = attribute("max_brightness") else { throw Problem("no readable max_brightness") }
        guard let maximum = maxText.sysfsNumber else { throw Problem("max_brightness is not a number: \"\(maxText)\"") }
        guard maximum > 0 else { throw Problem("max_brightness is \(maxText)") }
        let value: Double
        if let actual = attribute("actual_brightness")?.sysfsNumber {
            value = actual
        } else if let text = attribute("brightness") {
            guard let asked = text.sysfsNumber else { throw Problem("brightness is not a number: \"\(text)\"") }
            value = asked
        } else {
            throw Problem("neither actual_brightness nor brightness is readable")
        }
        self.init(name: name, brightness: min(max(value / maximum, 0), 1))
    }

    /// The key this device publishes: `display/<name>/brightness`.
    public var key: String { "display/\(name)/brightness" }

    /// The key and value to publish.
    public var values: [(key: String, value: JSONValue)] { [(key: key, value: .number(brightness))] }
}
