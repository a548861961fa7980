import DBus
import NotifyBus

extension SensorProxyStateMachine {
    /// Applies properties from `GetAll` (`trusted` false) or a signal (`trusted` true): sensors
    /// that turned present are claimed, those that turned absent are reset, and the readings of
    /// live sensors are published. A reading in a signal makes a settling sensor live.
    mutating func apply(_ properties: [String: DBusValue], trusted: Bool, into actions: inout [Action]) {
        for sensor in SensorProxySensor.allCases {
            guard let value = properties[sensor.hasProperty] else { continue }
            guard case .boolean(let present) = value else {
                wrongType(sensor.hasProperty, value, expected: "b", into: &actions)
                continue
            }
            if present {
                claim(sensor, into: &actions)
            } else if state(of: sensor) != .absent {
                removed(sensor, into: &actions)
            }
        }
        // Light's unit is kept from any read, so a reading of the level alone can be published.
        if let value = properties["LightLevelUnit"] {
            if case .string(let unit) = value, unit == "lux" || unit == "vendor" {
                lightUnit = unit
            } else {
                wrongType("LightLevelUnit", value, expected: "s ('lux' or 'vendor')", into: &actions)
            }
        }
        for sensor in SensorProxySensor.allCases {
            let state = state(of: sensor)
            guard state == .live || state.isSettling else { continue }
            guard sensor.readings.contains(where: { properties[$0] != nil }) else { continue }
            // The first reading in a signal after the claim: the value is live from here on.
            if trusted { trust(sensor, into: &actions) }
            guard self.state(of: sensor) == .live else { continue }
            publishReadings(of: sensor, from: properties, into: &actions)
        }
    }

    private mutating func publishReadings(
        of sensor: SensorProxySensor, from properties: [String: DBusValue], into actions: inout [Action]
    ) {
        switch sensor {
        case .accelerometer:
            guard let value = properties["AccelerometerOrientation"] else { return }
            guard case .string(let raw) = value else {
                return wrongType("AccelerometerOrientation", value, expected: "s", into: &actions)
            }
            guard let orientation = SensorProxySource.orientation(for: raw) else {
                actions.append(.reportProblem("AccelerometerOrientation has an unknown value '\(raw)'; skipped"))
                return
            }
            actions.append(.publish(key: sensor.key, value: .string(orientation)))
        case .proximity:
            guard let value = properties["ProximityNear"] else { return }
            guard case .boolean(let near) = value else {
                return wrongType("ProximityNear", value, expected: "b", into: &actions)
            }
            actions.append(.publish(key: sensor.key, value: .bool(near)))
        case .light:
            if let value = properties["LightLevel"] {
                guard case .double(let level) = value, level.isFinite else {
                    return wrongType("LightLevel", value, expected: "d", into: &actions)
                }
                lightLevel = level
            }
            guard let level = lightLevel else { return }
            let unit = lightUnit ?? "lux"
            actions.append(.publish(key: sensor.key, value: .object(["level": .number(level), "unit": .string(unit)])))
        }
    }

    /// A sensor the service no longer has: forgotten, and its key reset (`orientation` to
    /// `"unknown"`, as the daemon resets it; `proximity` and `light` to `null`).
    private mutating func removed(_ sensor: SensorProxySensor, into actions: inout [Action]) {
        forget(sensor, into: &actions)
        switch sensor {
        case .accelerometer: actions.append(.publish(key: sensor.key, value: "unknown"))
        case .proximity: actions.append(.publish(key: sensor.key, value: .null))
        case .light:
            lightLevel = nil
            actions.append(.publish(key: sensor.key, value: .null))
        }
    }

    private func wrongType(_ property: String, _ value: DBusValue, expected: String, into actions: inout [Action]) {
        actions.append(
            .reportProblem("\(property) has type '\(value.signature)' (\(value)), expected '\(expected)'; skipped"))
    }
}
