public import DBus
public import NotifyBus

/// Desktop settings from the XDG desktop portal (`org.freedesktop.portal.Settings` on the
/// session bus), published as the specification's `settings/<namespace>/<key>`, e.g.
/// `settings/org.freedesktop.appearance/color-scheme` = `1`.
///
/// What it does:
/// - When the portal is there (at start, after it restarts, after the bus came back), calls
///   `ReadAll(namespaces)` and publishes every setting; keys it published before that are no
///   longer there get `null`.
/// - Then follows `SettingChanged(s namespace, s key, v value)` from the portal's current owner.
/// - Works with portal version 1 (xdg-desktop-portal ≤ 1.16: no `ReadOne`, `Read` double-wraps
///   the variant) and version 2: it relies only on `ReadAll` and `SettingChanged`, which both
///   versions have, and the mapping below unwraps any number of variants, so a double-wrapped
///   value maps like a single-wrapped one.
/// - Namespaces are configurable (`Configuration.namespaces`): exact names or prefixes ending
///   in `*`, as the portal's `ReadAll` takes them; empty (the default) means all. Signals for
///   other namespaces are ignored.
///
/// ## Variant → JSON
/// | D-Bus | JSON | example |
/// |---|---|---|
/// | `v` (any depth) | the value inside | `<<uint32 1>>` → `1` |
/// | `b` | `true`/`false` | |
/// | `y` `n` `q` `i` `u` `x` | integer | `color-scheme` `u` 1 → `1` |
/// | `t` | integer; above 2⁶³−1 too, digits kept exactly (`.decimal`) | |
/// | `d` | number (NaN and infinities → `null`) | `text-scaling-factor` 1.25 → `1.25` |
/// | `s` `o` `g` | string | `'prefer-dark'` → `"prefer-dark"` |
/// | `(…)` | array of the fields | `accent-color` `(ddd)` → `[0.25, 0.5, 1.0]` |
/// | `aT` (also `ay`) | array | `as` → `["a", "b"]`; `ay` → `[104, 105]` |
/// | `a{KV}` | object; keys that are not strings are written as JSON text | `a{sv}` → `{"k": …}`, `a{ui}` → `{"1": 2}` |
///
/// A `SettingChanged` or `ReadAll` answer of the wrong shape is logged and skipped. Status: `running` while the portal answers; `unavailable` while it is absent or the
/// session bus is unreachable (it keeps watching and reconnecting).
public typealias PortalSettingsSource = SystemSource<PortalSettingsConfiguration>

/// How `PortalSettingsSource` behaves.
public struct PortalSettingsConfiguration: Sendable {
    /// The bus the portal is on (the session bus, from `DBUS_SESSION_BUS_ADDRESS`).
    public var address: DBusAddress
    /// The namespaces to publish (exact, or a prefix ending in `*`); empty means all.
    public var namespaces: [String]
    /// Timeouts, and reconnection backoff.
    public var connection: DBusConnection.Configuration

    /// Creates a configuration.
    public init(
        address: DBusAddress = .session, namespaces: [String] = [],
        connection: DBusConnection.Configuration = .init(defaultTimeout: .seconds(10))
    ) {
        self.address = address
        self.namespaces = namespaces
        self.connection = connection
    }
}

extension SystemSource where Settings == PortalSettingsConfiguration {
    /// The key of a setting: `settings/<namespace>/<key>`.
    public static func key(namespace: String, key: String) -> String { "settings/\(namespace)/\(key)" }

    /// Whether `namespace` is selected by `patterns` (exact names, or prefixes ending in `*`;
    /// empty selects all).
    public static func selects(_ patterns: [String], namespace: String) -> Bool {
        if patterns.isEmpty { return true }
        return patterns.contains { pattern in
            pattern.hasSuffix("*") ? namespace.hasPrefix(String(pattern.dropLast())) : pattern == namespace
        }
    }

    /// A setting's value as JSON (see the table of `PortalSettingsSource`).
    public static func json(from value: DBusValue) -> JSONValue {
        switch value {
        case .variant(let inner): json(from: inner)
        case .boolean(let b): .bool(b)
        case .byte(let v): .integer(Int64(v))
        case .int16(let v): .integer(Int64(v))
        case .uint16(let v): .integer(Int64(v))
        case .int32(let v): .integer(Int64(v))
        case .uint32(let v): .integer(Int64(v))
        case .int64(let v): .integer(v)
        case .uint64(let v): JSONValue(v)
        case .double(let d): d.isFinite ? .number(d) : .null
        case .string(let s), .objectPath(let s), .signature(let s): .string(s)
        case .structure(let fields): .array(fields.map(json(from:)))
        case .array(_, let elements): .array(elements.map(json(from:)))
        case .dictionary(_, _, let entries):
            .object(JSONObject(entries.map { entry in
                let key = entry.key.stringValue ?? json(from: entry.key).jsonText
                return (key, json(from: entry.value))
            }))
        }
    }
}
