import TestSupport

/// The real peers of every source but power, as on a desktop: iio-sensor-proxy on a umockdev
/// test bed (an accelerometer, a proximity sensor, a light sensor) and systemd-localed on one
/// private system bus, xdg-desktop-portal on a private session bus.
struct RealPeers {
    let system: PrivateBus
    let sensors: IIOTestbed
    let localed: RealLocaled
    let portal: RealPortal

    /// Starts them all, localed also bus-activatable when `activatingLocaled` (as installed on a
    /// system), and waits for iio-sensor-proxy's name.
    init(activatingLocaled: Bool = false) async throws {
        system = try PrivateBus()
        sensors = try IIOTestbed(bus: system)
        for device in ["accel", "proximity", "als"] { try sensors.add(device) }
        try sensors.start()
        localed = try await RealLocaled(bus: system, initialLocale: ["LANG=C.UTF-8"])
        try await localed.start()
        if activatingLocaled { try await localed.installActivation() }
        try await system.waitForOwner(of: "net.hadess.SensorProxy")
        portal = try await RealPortal()
    }

    /// The programs' options naming the two buses.
    var buses: [String] { ["--system-bus", system.address, "--session-bus", portal.bus.address] }
}
