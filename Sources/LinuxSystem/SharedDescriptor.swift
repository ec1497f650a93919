// A descriptor that several threads make system calls on, and one of them may close: each call holds it through
// a `CallGate` rather than a lock, so a call never waits for another thread's call (a playback thread's upload,
// say) to finish first; `close()` waits until the calls in flight are done, so that the number is never closed,
// and handed to another file by the kernel, under a call still using it.
@_spi(Internals) public final class SharedDescriptor: Sendable {
    @usableFromInline let gate = CallGate()
    @usableFromInline let fd: Int32

    @_spi(Internals) public init(_ fd: Int32) { self.fd = fd }

    deinit { close() }

    @_spi(Internals) public var isClosed: Bool { gate.isShut }

    /// Runs `body` with the descriptor held open; nil, without running it, once the descriptor is closed.
    @inlinable @_spi(Internals)
    public func withDescriptor<T, E: Error>(_ body: (Int32) throws(E) -> T) throws(E) -> T? {
        try gate.pass { () throws(E) -> T in try body(fd) }
    }

    /// The corresponding C function is `close`, once, after every call in flight has returned. Calls that
    /// begin after this one began see the descriptor closed. Closing twice is harmless: true for the call that
    /// closed it.
    @discardableResult
    @_spi(Internals) public func close() -> Bool {
        guard gate.shut() else { return false }
        Sys.close(fd)
        return true
    }
}
