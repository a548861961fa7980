import CEpollLoop

extension LoopContext {
    /// How many bytes wait to be read on the socket or pipe `fd` now (`ioctl(FIONREAD)`); 0 when
    /// it cannot tell.
    package func readableBytes(on fd: Int32) -> Int {
        max(0, Int(notifybus_readable_bytes(fd)))
    }
}
