/// What one `thermal_zone<N>` device says, mapped onto a `ThermalLevel` by the specification's (Source keys and values) rule.
///
/// Its sysfs attributes: `temp` (millidegrees Celsius), and for each trip point `K`,
/// `trip_point_K_type` (`passive`, `active`, `hot`, `critical`) and `trip_point_K_temp`. The zone
/// is `critical` at or above a `hot` or `critical` trip, `serious` at or above its lowest
/// `passive` trip, `fair` within 10 °C below that trip, else `nominal`. `active` trips (fans) are
/// ignored, and so are trips whose temperature is not a number or not above 0 (drivers mark an
/// unused trip so); trip indices are read from 0 up to the first one missing.
public struct ThermalZoneReading: Sendable, Hashable {
    /// One trip point: its type and its temperature in millidegrees Celsius.
    public struct Trip: Sendable, Hashable {
        /// `passive`, `active`, `hot` or `critical` (`trip_point_K_type`).
        public var type: String
        /// Millidegrees Celsius (`trip_point_K_temp`).
        public var temperature: Int

        /// Creates a trip point.
        public init(type: String, temperature: Int) {
            self.type = type
            self.temperature = temperature
        }
    }

    /// Why a zone gives no level.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, e.g. `temp is not a number: "n/a"`.
        public var description: String

        /// Creates a problem that says `description`.
        public init(_ description: String) { self.description = description }

        /// The zone's `temp` cannot be read: usual for some zones (a wireless card's while it is
        /// down), not a fault.
        public static let unreadable = Problem("no readable temp")
    }

    /// The most trip points read from one zone.
    static let maximumTrips = 32
    /// How far below the lowest passive trip a zone is `fair`, in millidegrees: 10 °C.
    static let fairMargin = 10_000

    /// The zone's kernel name (`thermal_zone0`).
    public var name: String
    /// Its temperature, millidegrees Celsius.
    public var temperature: Int
    /// Its trip points that count (not `active`, with a temperature above 0).
    public var trips: [Trip]

    /// Creates a reading from its parts.
    public init(name: String, temperature: Int, trips: [Trip]) {
        self.name = name
        self.temperature = temperature
        self.trips = trips.filter { $0.type != "active" && $0.temperature > 0 }
    }

    /// Reads a zone through `attribute`, which returns a sysfs attribute's text, or `nil` when
    /// the zone has no such readable attribute.
    /// - Throws: `Problem` when `temp` is missing or not a number.
    public init(name: String, attribute: (String) -> String?) throws(Problem) {
        guard let text = attribute("temp") else { throw .unreadable }
        guard let temperature = Int(text.sysfsTrimmed) else { throw Problem("temp is not a number: \"\(text.sysfsTrimmed)\"") }
        var trips: [Trip] = []
        for index in 0..<Self.maximumTrips {
            guard let type = attribute("trip_point_\(index)_type")?.sysfsTrimmed else { break }
            guard let trip = attribute("trip_point_\(index)_temp").flatMap({ Int($0.sysfsTrimmed) }) else { continue }
            trips.append(Trip(type: type, temperature: trip))
        }
        self.init(name: name, temperature: temperature, trips: trips)
    }

    /// The zone's level.
    public var level: ThermalLevel {
        if trips.contains(where: { ($0.type == "hot" || $0.type == "critical") && temperature >= $0.temperature }) {
            return .critical
        }
        guard let passive = trips.filter({ $0.type == "passive" }).map(\.temperature).min() else { return .nominal }
        if temperature >= passive { return .serious }
        if temperature >= passive - Self.fairMargin { return .fair }
        return .nominal
    }
}
