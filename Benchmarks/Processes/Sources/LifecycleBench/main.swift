import BenchSupport
import Harness

let usage = """
    usage: LifecycleBench run --notifybusd PATH --focus-thaw PATH --work DIR [--tree NAME] [--rounds 50]
                              [--flush-rounds 5] [--wake-rounds 30] [--busy-seconds 60] [--idle-seconds 60]
           LifecycleBench phoc --notifybusd PATH --test-client PATH --work DIR [--tree NAME] [--rounds 50]
           LifecycleBench made --notifybusd PATH --work DIR [--tree NAME] [--apps 20]
           LifecycleBench subscriber --address ADDR --kind daemon --cgroup DIR [--namespace NS] [--report done|none]   (started by run)
           LifecycleBench responder --address ADDR --cgroup DIR --name NAME   (started by run)
    """

await runAsyncModes("LifecycleBench", usage: usage) { mode, arguments in
    switch mode {
    case "subscriber": try Subscriber(arguments: arguments).run()
    case "responder": try Responder(arguments: arguments).run()
    case "run": try await LifecycleRun(arguments: arguments, executable: ownExecutable()).run()
    case "phoc": try await PhocRun(arguments: arguments).run()
    case "made": try await MadeScopeRun(arguments: arguments).run()
    default: throw HarnessError(usage)
    }
}
