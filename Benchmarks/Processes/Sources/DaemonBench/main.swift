import BenchSupport
import Harness

let usage = """
    usage: DaemonBench frozen|latency|fanout|attacks|idle --notifybusd PATH [options]
           DaemonBench subscriber --address ADDR --kind raw|daemon|unicast [options]   (started by the others)
           DaemonBench sender --address ADDR --destinations NAME,… [options]           (started by fanout)
           DaemonBench attacker --address ADDR --kind KIND [options]                   (started by attacks)
           DaemonBench probe --address ADDR [--interval MS] [--destination NAME]      (started by attacks)
           DaemonBench plain --address ADDR [--name NAME]                              (started by attacks)
    """

runModes("DaemonBench", usage: usage) { mode, arguments in
    switch mode {
    case "subscriber": try Subscriber(arguments: arguments).run()
    case "frozen": try FrozenBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "latency": try LatencyBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "sender": try SignalSender(arguments: arguments).run()
    case "attacker": try Attacker(arguments: arguments).run()
    case "probe": try VersionProbe(arguments: arguments).run()
    case "plain": try PlainService(arguments: arguments).run()
    case "fanout": try FanOutBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "attacks": try AttackBenchmark(arguments: arguments, executable: ownExecutable()).run()
    case "idle": try IdleBenchmark(arguments: arguments, executable: ownExecutable()).run()
    default: throw HarnessError(usage)
    }
}
