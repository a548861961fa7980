import DBus
import Logging
import NotifyBusProtocol

/// `org.notifybus.Lifecycle1`: background tasks (specification: Freezing background apps,
/// "Background time").
extension LifecycleDriver {
    /// The interface, whose calls reach the driver that `driver` gives at the time of the call.
    static func busInterface(driver: @escaping () -> LifecycleDriver?) -> DBusInterface {
        DBusInterface(
            name: LifecycleInterface.interface,
            methods: [
                DBusMethod(
                    LifecycleInterface.beginBackgroundTask, arguments: [.init("reason", "s")],
                    results: [.init("task", "u"), .init("seconds", "u")]
                ) { call in
                    guard let driver = driver() else { return call.fail(notRunning) }
                    driver.beginTask(call)
                },
                DBusMethod(LifecycleInterface.endBackgroundTask, arguments: [.init("task", "u")]) { call in
                    guard let driver = driver() else { return call.fail(notRunning) }
                    driver.endTask(call)
                },
            ],
            signals: [
                DBusSignalMember(
                    LifecycleInterface.backgroundTaskExpiring, arguments: [.init("task", "u"), .init("seconds", "u")]),
            ])
    }

    private static let notRunning = DBusError(name: DBusError.Name.failed, message: "the lifecycle does not run")

    /// `BeginBackgroundTask(reason)`: the caller's app unit, asked of the bus, is kept running.
    private func beginTask(_ call: DBusMethodCall) {
        let reason = call.arguments.first?.stringValue ?? ""
        guard reason.utf8.count <= LifecycleInterface.reasonBytes else {
            return call.fail(.init(
                name: DBusError.Name.invalidArgs,
                message: "the reason is \(reason.utf8.count) bytes: at most \(LifecycleInterface.reasonBytes)"))
        }
        guard let connection else { return call.fail(Self.notRunning) }
        let sender = call.sender
        connection.credentials(of: sender) { [weak self] result in
            guard let self, !self.stopped else { return call.fail(Self.notRunning) }
            let pid = (try? result.get())?.processID.flatMap { Int32(exactly: $0) }
            guard let pid, let group = AppUnit.group(ofProcess: pid, under: self.root) else {
                return call.fail(.init(
                    name: LifecycleInterface.notAnApp,
                    message: "the caller's process is in no app unit under \(self.root)"))
            }
            let (outcome, actions) = self.policy.beginTask(group: group, connection: sender.rawValue, now: self.now)
            switch outcome {
            case .success(let grant):
                self.logger.notice("lifecycle: background task \(grant.task) of \(group) for \(sender): \(reason)")
                call.reply([.uint32(grant.task), .uint32(grant.seconds)])
            case .failure:
                call.fail(.init(
                    name: BusInterface.ErrorName.limitsExceeded,
                    message: "\(LifecyclePolicy.tasksPerApp) background tasks of this app are open"))
            }
            self.perform(actions)
        }
    }

    /// `EndBackgroundTask(task)`.
    private func endTask(_ call: DBusMethodCall) {
        guard case .uint32(let number)? = call.arguments.first else { return call.fail(.init(name: DBusError.Name.invalidArgs, message: "no task")) }
        let (outcome, actions) = policy.endTask(number, connection: call.sender.rawValue, now: now)
        switch outcome {
        case .success:
            logger.info("lifecycle: background task \(number) ended by \(call.sender)")
            call.reply()
        case .failure:
            call.fail(.init(name: DBusError.Name.invalidArgs, message: "task \(number) is not an open task of this connection"))
        }
        perform(actions)
    }
}
