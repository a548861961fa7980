import Harness

extension ChildProcess {
    /// Starts `arguments` (the first an absolute path) with `environment` added to this
    /// process's: its standard input and output pipes to this process (lines both ways), its
    /// standard error appended to `log`.
    public static func start(_ arguments: [String], environment: [String: String] = [:], standardError log: String) throws
        -> ChildProcess
    {
        try ChildProcess(
            executable: arguments[0], arguments: Array(arguments.dropFirst()),
            environment: ChildProcess.environment(with: environment.mapValues { Optional($0) }), standardError: .append(log))
    }
}
