import DBus

/// One of iio-sensor-proxy's sensors, with the names of its D-Bus members.
enum SensorProxySensor: CaseIterable, Hashable, Sendable {
    case accelerometer, light, proximity

    /// The boolean property saying whether the sensor exists (`HasAccelerometer`, …).
    var hasProperty: String {
        switch self {
        case .accelerometer: "HasAccelerometer"
        case .light: "HasAmbientLight"
        case .proximity: "HasProximity"
        }
    }

    /// The method that claims it (`ClaimAccelerometer`, …).
    var claimMember: MemberName {
        switch self {
        case .accelerometer: "ClaimAccelerometer"
        case .light: "ClaimLight"
        case .proximity: "ClaimProximity"
        }
    }

    /// The method that releases it (`ReleaseAccelerometer`, …).
    var releaseMember: MemberName {
        switch self {
        case .accelerometer: "ReleaseAccelerometer"
        case .light: "ReleaseLight"
        case .proximity: "ReleaseProximity"
        }
    }

    /// The properties that carry its readings.
    var readings: [String] {
        switch self {
        case .accelerometer: ["AccelerometerOrientation"]
        case .light: ["LightLevel", "LightLevelUnit"]
        case .proximity: ["ProximityNear"]
        }
    }

    /// The bus key its readings are published under (specification: Source keys and values).
    var key: String {
        switch self {
        case .accelerometer: "orientation"
        case .light: "light"
        case .proximity: "proximity"
        }
    }
}
