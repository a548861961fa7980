import EpollLoop
import NotifyBus

/// The loop-side part of `MemoryPressureSource`: carries out what its
/// `MemoryPressureStateMachine` decides (triggers, the return timer, publishing, status) and feeds
/// it what the triggers' descriptors and the timer say.
final class MemoryPressureWatcher: ConfiguredWatcher {
    static let key = "memory/pressure"
    /// specification: Source keys and values: 100 ms stalled within a 2 s window (a window unprivileged processes may
    /// arm too: a multiple of 2 s), and the return to `normal` 10 s after the last trigger.
    static let stall = Duration.milliseconds(100)
    static let window = Duration.seconds(2)
    static let returnDelay = Duration.seconds(10)

    private let bus: NotificationBus
    private let configuration: MemoryPressureConfiguration
    private unowned let context: LoopContext
    private let report: (SourceStatus) -> Void
    private let problem: SourceProblems
    private var state = MemoryPressureStateMachine()
    private var triggers: [(trigger: PressureTrigger, registration: IORegistration)] = []
    private var returnTimer: LoopTimer?

    init(bus: NotificationBus, configuration: MemoryPressureConfiguration, context: LoopContext, hooks: SourceHooks) {
        self.bus = bus
        self.configuration = configuration
        self.context = context
        report = hooks.report
        problem = hooks.problem
    }

    func start(in context: LoopContext) {
        arm()
    }

    func stop(in context: LoopContext, then done: @escaping () -> Void) {
        perform(state.stopped())
        done()
    }

    /// Arms the triggers again when they are not armed; PSI tells every change otherwise.
    func reread(then done: @escaping () -> Void) {
        if !state.isArmed { arm() }
        done()
    }

    /// Opens a trigger of each kind and watches it; both or neither.
    private func arm() {
        do {
            for kind in MemoryPressureStateMachine.Trigger.allCases {
                let trigger = try PressureTrigger(path: configuration.path, kind: kind.rawValue, stall: Self.stall, window: Self.window)
                do {
                    let registration = try context.register(fileDescriptor: trigger.fileDescriptor, interest: .priority) {
                        [weak self] events in self?.ready(events, kind)
                    }
                    triggers.append((trigger, registration))
                } catch {
                    trigger.close()
                    throw error
                }
            }
        } catch {
            perform(state.armingFailed("\(error)"))
            return
        }
        perform(state.armed())
    }

    private func ready(_ events: IOEvents, _ kind: MemoryPressureStateMachine.Trigger) {
        if !events.isDisjoint(with: [.error, .hangup]) {
            // The trigger is gone (its cgroup was removed); epoll would report it for ever.
            perform(state.triggerFailed("\(configuration.path): the \(kind.rawValue) trigger reports an error (the file went away?)"))
        } else if events.contains(.priority) {
            perform(state.triggered(kind))
        }
    }

    private func perform(_ actions: [MemoryPressureStateMachine.Action]) {
        for action in actions {
            switch action {
            case .publish(let level):
                bus.publishSourceValue(Self.key, .string(level.name), problem: problem)
            case .reportStatus(let status):
                report(status)
            case .restartReturnTimer:
                if let returnTimer { context.cancelTimer(returnTimer) }
                returnTimer = context.scheduleTimer(after: Self.returnDelay) { [weak self] in
                    guard let self else { return }
                    self.returnTimer = nil
                    self.perform(self.state.returnTimerFired())
                }
            case .cancelReturnTimer:
                if let returnTimer { context.cancelTimer(returnTimer) }
                returnTimer = nil
            case .closeTriggers:
                for (trigger, registration) in triggers {
                    context.deregister(registration)
                    trigger.close()
                }
                triggers = []
            }
        }
    }
}
