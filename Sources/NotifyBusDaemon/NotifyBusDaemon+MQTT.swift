import EpollLoop
import Logging
import NotifyBus
import NotifyBusMQTT
import NotifyBusSources

extension NotifyBusDaemon {
    /// The name the MQTT link has in `Sources` (specification: Publishing a fleet to MQTT).
    public static let mqttSourceName = "mqtt"

    /// Starts the MQTT link of `configuration.mqtt`, if any, on the daemon's loop: its status is
    /// the `mqtt` entry of `Sources`. Returns the running link.
    func startMQTT(on loop: EventLoopThread) -> MQTTLinkService? {
        guard let mqtt = configuration.mqtt else { return nil }
        let link = MQTTLinkService(configuration: mqtt, bus: bus, loop: loop, logger: configuration.logger)
        do {
            try link.start { context, status in
                context[local: BusService.key]?.setSource(
                    Self.mqttSourceName, status: status.name, reason: status.reason ?? "")
            }
        } catch {
            configuration.logger.error("cannot start the MQTT link: \(error)")
            return nil
        }
        return link
    }
}
