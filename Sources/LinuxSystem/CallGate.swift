// Calls that must not outlive what they use, without a lock: each call holds the gate open with an atomic count,
// so calls never wait for one another; `shut()` lets no new call in and waits until the calls in flight are done,
// after which what they used may go (a descriptor closed, an effect slot erased and reused). The gate is one word
// held in place in its owner (a stored `let` of the object whose calls it guards), not an object of its own: a call
// through it touches no memory beside its owner's.
public import Synchronization

@_spi(Internals) public struct CallGate: ~Copyable, Sendable {
    /// Bit 0: shut. The rest: the calls in flight, counted in twos.
    @usableFromInline let word: Atomic<Int>

    @_spi(Internals) public init() { word = Atomic(0) }

    /// How many times `shut()` yields the processor to a call in flight before it sleeps between looks.
    static let yieldsBeforeSleeping = 1000

    /// What `shut()` does between two looks at a call still in flight.
    enum Pause: Equatable {
        /// Gives the processor up (a call in flight is one system call: microseconds).
        case yield
        /// Sleeps a millisecond (a force-feedback upload to a uinput device lasts until its server answers).
        case sleep
    }

    /// The pause after `looks` looks found a call in flight: a yield for the first `yieldsBeforeSleeping`, then a
    /// sleep, so that a long call does not keep a core busy.
    static func pause(afterLooks looks: Int) -> Pause { looks < yieldsBeforeSleeping ? .yield : .sleep }

    @_spi(Internals) public var isShut: Bool { word.load(ordering: .acquiring) & 1 != 0 }

    /// Runs `body` as a call in flight; nil, without running it, once the gate is shut.
    @inlinable @_spi(Internals)
    public func pass<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T? {
        let after = word.add(2, ordering: .sequentiallyConsistent).newValue
        defer { word.subtract(2, ordering: .sequentiallyConsistent) }
        guard after & 1 == 0 else { return nil }
        return try body()
    }

    /// Shuts the gate and returns once no call is in flight; true for the call that shut it (a second waits the
    /// same way and returns false).
    @discardableResult
    @_spi(Internals) public func shut() -> Bool {
        let before = word.bitwiseOr(1, ordering: .sequentiallyConsistent).oldValue
        // A call in flight is one system call: microseconds, except a force-feedback upload to a uinput device,
        // which lasts until its server answers (uinput gives it up to 30 s): `pause(afterLooks:)`.
        var looks = 0
        while word.load(ordering: .sequentiallyConsistent) >> 1 != 0 {
            switch Self.pause(afterLooks: looks) {
            case .yield: Sys.yield()
            case .sleep: Sys.sleep(nanoseconds: 1_000_000)
            }
            looks += 1
        }
        return before & 1 == 0
    }
}
