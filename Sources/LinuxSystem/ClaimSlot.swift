// A value that threads take turns at without a lock: a claim is one compare-and-swap, and a thread that finds the
// slot claimed by another gets nil at once instead of waiting (it has another way to go). Made for what sits
// before a device write on a caller's thread (an armed start, a prepared pattern): nothing there may wait for
// another thread. `store` waits out a claim in flight (a claim's body is short: one write at most).
public import Synchronization

@_spi(Internals) public final class ClaimSlot<Value>: @unchecked Sendable {
    @usableFromInline static var free: Int { 0 }
    @usableFromInline static var claimed: Int { 1 }

    /// `Sys.yield`, for the inlinable claim loop (which may name only public or usable-from-inline code).
    @usableFromInline static func yieldProcessor() { Sys.yield() }

    @usableFromInline let word: Atomic<Int>
    /// Read and written only by the thread whose compare-and-swap set `word` to `claimed`: not a Swift-checked
    /// property, so a claim pays for no exclusivity check.
    @usableFromInline let value: UnsafeMutablePointer<Value?>

    @_spi(Internals) public init(_ initial: Value? = nil) {
        word = Atomic(0)
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` on the value (which it may change or empty) when no other thread holds the slot; nil at once
    /// when one does.
    @inlinable @_spi(Internals)
    public func withClaim<Result, E: Error>(_ body: (inout Value?) throws(E) -> Result) throws(E) -> Result? {
        guard word.compareExchange(expected: Self.free, desired: Self.claimed, ordering: .acquiring).exchanged else {
            return nil
        }
        defer { word.store(Self.free, ordering: .releasing) }
        return try body(&value.pointee)
    }

    /// Runs `body` on the value, waiting out another thread's claim first (a short one by contract).
    @inlinable @_spi(Internals)
    public func withClaimWaiting<Result, E: Error>(_ body: (inout Value?) throws(E) -> Result) throws(E) -> Result {
        while true {
            if let result = try withClaim(body) { return result }
            Self.yieldProcessor()
        }
    }
}
