/// A file descriptor's registration with a loop (`LoopContext.register(fileDescriptor:interest:enabled:handler:)`).
///
/// A plain value: pass it back to the loop that made it to change or end the registration.
public struct IORegistration: Sendable, Hashable {
    /// Identifies the registration within its loop.
    let id: UInt64
    /// The registered descriptor.
    package let fileDescriptor: Int32
}
