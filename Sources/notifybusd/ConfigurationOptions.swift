import ArgumentParser

/// An option group checked by making what it configures: `validate()` makes the configuration,
/// and what cannot be made is a `ValidationError` saying what is wrong (notifybusd exits 64).
protocol ConfigurationOptions: ParsableArguments {
    /// What the options configure (`nil` where they leave it off).
    associatedtype Configuration
    /// What is wrong with the options, in words.
    associatedtype Problem: Error & CustomStringConvertible

    /// The configuration the options give.
    func configuration() throws(Problem) -> Configuration
}

extension ConfigurationOptions {
    func validate() throws {
        do {
            _ = try configuration()
        } catch {
            throw ValidationError(error.description)
        }
    }
}
