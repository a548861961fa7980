public import NotifyBus

/// What one `power_supply` device says, mapped onto its keys (specification: Source keys and values).
///
/// | device type (`POWER_SUPPLY_TYPE`) | keys |
/// |---|---|
/// | `Battery` | `battery/<name>/state`, `battery/<name>/level` |
/// | anything else with an `online` value (`Mains`, `USB`, `USB_C`, `USB_PD`, `Wireless`, `UPS`, …) | `power/<name>/online` |
/// | anything else | none (the device is ignored) |
///
/// `<name>` is the device's kernel name (`BAT0`, `AC`, `ucsi-source-psy-USBC000:001`).
/// Each value is read from the udev property (`POWER_SUPPLY_STATUS`), falling back to the
/// sysfs attribute (`status`) when the property is missing:
/// - state, from `POWER_SUPPLY_STATUS`: `Discharging` → `"unplugged"`, `Charging` → `"charging"`,
///   `Full` → `"full"`, `Not charging` → `"not-charging"`, anything else or nothing → `"unknown"`.
/// - level, a number from 0.0 to 1.0: `POWER_SUPPLY_CAPACITY`/100; without a capacity,
///   `ENERGY_NOW/ENERGY_FULL`, else `CHARGE_NOW/CHARGE_FULL`; clamped to 0…1. No key when none
///   of them is readable.
/// - online, from `POWER_SUPPLY_ONLINE`: `0` → `false`, any other integer (`1` fixed, `2`
///   programmable) → `true`.
public struct PowerSupplyReading: Sendable, Hashable {
    /// Which family of keys a device gets.
    public enum Kind: Sendable, Hashable {
        /// `battery/<name>/state` and `battery/<name>/level`.
        case battery
        /// `power/<name>/online`.
        case lineSupply
    }

    /// The device's kernel name, the `<name>` in its keys.
    public var name: String
    /// Battery or line supply.
    public var kind: Kind
    /// For a battery: its state (`"unplugged"`, `"charging"`, `"full"`, `"not-charging"`, `"unknown"`).
    public var state: String?
    /// For a battery: its charge, 0…1, when the device reports one.
    public var level: Double?
    /// For a line supply: whether it is online.
    public var online: Bool?

    /// Reads a device through `lookup(property, attribute)`, which returns the udev property's
    /// value, or else the sysfs attribute's, or `nil`. Returns `nil` for a device that maps onto
    /// no key (see the table of `PowerSupplyReading`).
    public init?(name: String, lookup: (_ property: String, _ attribute: String) -> String?) {
        self.name = name
        let type = lookup("POWER_SUPPLY_TYPE", "type")?.sysfsTrimmed
        if type == "Battery" {
            kind = .battery
            state = Self.state(forStatus: lookup("POWER_SUPPLY_STATUS", "status"))
            // Read lazily: a device with a capacity (most) is not asked for energy or charge
            // values, which costs a sysfs lookup each when the uevent does not carry them.
            level = Self.level(
                capacity: { lookup("POWER_SUPPLY_CAPACITY", "capacity") },
                energyNow: { lookup("POWER_SUPPLY_ENERGY_NOW", "energy_now") },
                energyFull: { lookup("POWER_SUPPLY_ENERGY_FULL", "energy_full") },
                chargeNow: { lookup("POWER_SUPPLY_CHARGE_NOW", "charge_now") },
                chargeFull: { lookup("POWER_SUPPLY_CHARGE_FULL", "charge_full") })
        } else if let online = Self.online(lookup("POWER_SUPPLY_ONLINE", "online")) {
            kind = .lineSupply
            self.online = online
        } else {
            return nil
        }
    }

    /// Creates a reading from its parts.
    public init(name: String, kind: Kind, state: String? = nil, level: Double? = nil, online: Bool? = nil) {
        self.name = name
        self.kind = kind
        self.state = state
        self.level = level
        self.online = online
    }

    /// Every key this kind of device can publish (whether or not this reading has a value for it).
    public var keys: [String] { Self.keys(name: name, kind: kind) }

    /// The keys and values to publish, in this order: state, level; or online.
    public var values: [(key: String, value: JSONValue)] {
        switch kind {
        case .battery:
            // Labelled like the result, so returning it needs no element-wise conversion.
            var out: [(key: String, value: JSONValue)] = []
            if let state { out.append(("battery/\(name)/state", .string(state))) }
            if let level { out.append(("battery/\(name)/level", .number(level))) }
            return out
        case .lineSupply:
            guard let online else { return [] }
            return [(key: "power/\(name)/online", value: .bool(online))]
        }
    }

    /// Every key a device of `kind` named `name` can publish.
    public static func keys(name: String, kind: Kind) -> [String] {
        switch kind {
        case .battery: ["battery/\(name)/state", "battery/\(name)/level"]
        case .lineSupply: ["power/\(name)/online"]
        }
    }

    /// The battery state (specification: Source keys and values) for a kernel `status` text.
    public static func state(forStatus status: String?) -> String {
        switch status?.sysfsTrimmed {
        case "Discharging": "unplugged"
        case "Charging": "charging"
        case "Full": "full"
        case "Not charging": "not-charging"
        default: "unknown"
        }
    }

    /// The charge level from `capacity` (percent), else `energyNow/energyFull`, else
    /// `chargeNow/chargeFull`, clamped to 0…1; `nil` when none can be computed.
    public static func level(
        capacity: String?, energyNow: String?, energyFull: String?, chargeNow: String?, chargeFull: String?
    ) -> Double? {
        level(
            capacity: { capacity }, energyNow: { energyNow }, energyFull: { energyFull },
            chargeNow: { chargeNow }, chargeFull: { chargeFull })
    }

    /// `level(capacity:energyNow:energyFull:chargeNow:chargeFull:)`, reading each text only when
    /// it is needed.
    private static func level(
        capacity: () -> String?, energyNow: () -> String?, energyFull: () -> String?,
        chargeNow: () -> String?, chargeFull: () -> String?
    ) -> Double? {
        if let capacity = number(capacity()) { return clamp(capacity / 100) }
        if let now = number(energyNow()), let full = number(energyFull()), full > 0 { return clamp(now / full) }
        if let now = number(chargeNow()), let full = number(chargeFull()), full > 0 { return clamp(now / full) }
        return nil
    }

    /// `online` as a Boolean: 0 is offline, any other integer online; `nil` when absent or not a number.
    public static func online(_ text: String?) -> Bool? {
        guard let text, let value = Int(text.sysfsTrimmed) else { return nil }
        return value != 0
    }

    private static func number(_ text: String?) -> Double? { text?.sysfsNumber }

    private static func clamp(_ value: Double) -> Double { min(max(value, 0), 1) }
}
