#if canImport(Glibc)
import Glibc
#endif
import DBus
import NotifyBus
import NotifyBusClient
import NotifyBusSources
import SystemSupport

/// `notifywatch --daemon`: the same lines, through a running `notifybusd` (specification: notifywatch output, "Through the daemon").
///
/// It subscribes with its patterns, policy, limit and `initial`, prints a `source` line for each
/// of the daemon's sources and then every change of them, and every event of its subscription.
/// Its signals act on the subscription; when something else freezes or stops the process, the
/// daemon holds its notifications and its events say so after the thaw.
struct DaemonWatch {
    let patterns: [KeyPattern]
    let policy: DeliveryPolicy
    let limit: Int
    let initial: InitialDelivery
    let sessionBus: String?
    let exitIfUnavailable: Bool

    /// Watches until SIGINT or SIGTERM (0), or the daemon leaving (1); 69 without a daemon (the
    /// bus starts one first where it can).
    func run(output: LiveOutput, listener: SignalListener) async -> Int32 {
        let client: NotifyBusClient
        do {
            client = try await NotifyBusClient(address: sessionBus.map(DBusAddress.address) ?? .session)
        } catch {
            printError("cannot reach the session bus: \(error)")
            return 69
        }
        guard await client.startDaemon() else {
            printError("no notifybusd on the session bus (org.notifybus.Bus1 has no owner, and the bus cannot start one): start it, or drop --daemon")
            await client.close()
            return 69
        }
        let sources = (try? await client.sources()) ?? []
        for source in sources { output.source(source.name, source.status, at: client.elapsed(), reason: source.reason) }
        if exitIfUnavailable, !sources.contains(where: { $0.status == "running" }) {
            printError("no source of the daemon is running")
            await client.close()
            return 69
        }
        let subscription: RemoteSubscription
        do {
            subscription = try await client.subscribe(patterns, policy: policy, limit: limit, initial: initial)
        } catch {
            printError("Subscribe: \(error)")
            await client.close()
            return 69
        }
        let updates = await client.sourceUpdates()
        let jobs = JobControlDriver(rereadsOnContinue: false)
        return await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await event in subscription {
                    output.event(event)
                    if case .suspended = event { jobs.suspendedLinePrinted() }
                }
                return Task.isCancelled ? nil : 1  // the daemon left
            }
            group.addTask {
                for await states in updates {
                    for source in states { output.source(source.name, source.status, at: client.elapsed(), reason: source.reason) }
                }
                return nil
            }
            group.addTask {
                // Ctrl-Z stops the process once the `suspended` line its `Suspend` brings is
                // printed (or after a second without it): a line printed before, such as the one
                // of the daemon's own suspension while something else froze or stopped the
                // process, does not count. The daemon's sources re-read by themselves.
                await jobs.run(signals: listener.signals) { request in
                    switch request {
                    case .suspend: subscription.suspend()
                    case .resume: subscription.resume()
                    case .reread: break
                    }
                }
                return 0
            }
            var code: Int32 = 0
            while let result = await group.next() {
                guard let result else { continue }
                code = result
                break
            }
            if code == 1 { printError("notifybusd left the bus") }
            subscription.cancel()
            group.cancelAll()
            await client.close()
            return code
        }
    }
}

extension LiveOutput {
    /// Prints a `source` line for a daemon's source, as for one running here.
    func source(_ name: String, _ status: String, at time: Duration, reason: String = "") {
        let converted: SourceStatus = switch status {
        case "running": .running
        case "failed": .failed(reason: reason)
        default: .unavailable(reason: reason)
        }
        source(name, converted, at: time)
    }
}
