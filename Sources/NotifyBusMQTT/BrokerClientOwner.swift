import EpollLoop
import Mosquitto

/// A broker connection that owns its `MosquittoClient` on an event loop (the link, a fleet
/// watcher's connection): it makes a client for each attempt, hears its events, and is told when
/// an attempt is lost.
protocol BrokerClientOwner: AnyObject {
    /// The loop its client lives on.
    var context: LoopContext { get }
    /// The client of the current attempt; `nil` between attempts.
    var client: MosquittoClient? { get set }
    /// An event of the client.
    func handle(_ event: MosquittoClient.Event)
    /// The attempt failed, for `reason`.
    func lost(_ reason: String)
}

extension BrokerClientOwner {
    /// Makes the client of an attempt with `configuration` and connects it (libmosquitto
    /// resolves the broker's host again, and tries each of its addresses); a client that cannot be
    /// made or connected loses the attempt, saying so with the broker's `url`.
    func openClient(_ configuration: MosquittoConfiguration, url: String) {
        do {
            let client = try MosquittoClient(configuration: configuration, context: context) { [weak self] event in
                self?.handle(event)
            }
            self.client = client
            try client.connect()
        } catch {
            lost("\(url): \(error.reason)")
        }
    }
}
