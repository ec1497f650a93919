// Values that threads take turns at without a lock: a claim is one atomic read-modify-write, and a thread that
// finds a value claimed by another gets nil at once instead of waiting (it has another way to go). Made for what
// sits before a device write on a caller's thread (an armed start, a prepared pattern): nothing there may wait for
// another thread. `withClaimWaiting` waits out a claim in flight (a claim's body is short: one device write, or
// a player's start).
public import Synchronization

/// A fixed number of values in one block, each claimed by its own bit of one word: reading several of them one
/// after another touches this object and one allocation, whatever their number.
@_spi(Internals) public final class ClaimSlots<Value>: @unchecked Sendable {
    /// Bit `i` is set while a thread holds value `i`.
    @usableFromInline let word: Atomic<Int>
    /// Read and written only by the thread that set the value's bit: not a Swift-checked property, so a claim pays
    /// for no exclusivity check.
    @usableFromInline let values: UnsafeMutablePointer<Value?>
    /// How many values there are (at most `Int.bitWidth - 1`).
    @_spi(Internals) public let count: Int

    /// Yields the processor, for the inlinable wait loop (which may name only public or usable-from-inline code).
    @usableFromInline static func yieldProcessor() { Sys.yield() }

    /// `count` empty values.
    @_spi(Internals) public init(count: Int) {
        precondition(count > 0 && count < Int.bitWidth, "ClaimSlots holds 1 to \(Int.bitWidth - 1) values")
        self.count = count
        word = Atomic(0)
        values = .allocate(capacity: count)
        values.initialize(repeating: nil, count: count)
    }

    deinit {
        values.deinitialize(count: count)
        values.deallocate()
    }

    /// Runs `body` on value `index` (which it may change or empty) when no other thread holds it; nil at once when
    /// one does. Claiming sets the value's bit: when it was set already, nothing changed and the claim fails.
    @inlinable @_spi(Internals)
    public func withClaim<Result, E: Error>(_ index: Int = 0, _ body: (inout Value?) throws(E) -> Result) throws(E)
        -> Result?
    {
        precondition(index >= 0 && index < count, "no value \(index) among \(count)")
        let bit = 1 << index
        guard word.bitwiseOr(bit, ordering: .acquiring).oldValue & bit == 0 else { return nil }
        defer { word.bitwiseAnd(~bit, ordering: .releasing) }
        return try body(&values[index])
    }

    /// Runs `body` on value `index`, waiting out another thread's claim first (a short one by contract).
    @inlinable @_spi(Internals)
    public func withClaimWaiting<Result, E: Error>(_ index: Int = 0, _ body: (inout Value?) throws(E) -> Result)
        throws(E) -> Result
    {
        while true {
            if let result = try withClaim(index, body) { return result }
            Self.yieldProcessor()
        }
    }
}
