import CEpollLoop

/// glibc's heap, for a long-running process whose clients may make it allocate much and then
/// leave: large blocks as mappings of their own, and free memory given back to the kernel.
package enum HeapMemory {
    /// Makes every block of at least `bytes` a mapping of its own (`mallopt(M_MMAP_THRESHOLD, …)`),
    /// given back to the kernel when freed; glibc otherwise raises the threshold after large
    /// blocks are freed, so that a large message received, say, grows the heap for good, and
    /// growing a block in the heap copies it (twice its size at once) where a mapping is remapped.
    /// - Returns: whether glibc took it.
    @discardableResult
    package static func mapBlocks(ofAtLeast bytes: Int) -> Bool {
        notifybus_fix_mmap_threshold(Int32(clamping: bytes)) == 1
    }

    /// Gives the heap's free pages back to the kernel (`malloc_trim(0)`), after much was freed.
    package static func trim() {
        _ = malloc_trim(0)
    }
}
