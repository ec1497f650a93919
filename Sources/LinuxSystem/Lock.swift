// The lock of all shared state.
public import Glibc

/// A value that one thread at a time reads or changes, the package's one lock: `Synchronization.Mutex`'s shape
/// (`withLock`) and behaviour (priority inheritance; locking it again from the thread that holds it traps) on a
/// `pthread_mutex_t`. Not `Mutex` itself because ThreadSanitizer intercepts pthread's mutex calls and so sees the
/// order they impose, while `Mutex` waits for a contended lock in the kernel, from the uninstrumented Swift
/// runtime: under contention a TSan build reports races on everything a `Mutex` guards.
///
/// Public under the SPI `Internals`, not `package`: the compiler specializes an `@inlinable` generic in another
/// module only when it is public, and unspecialized, every `withLock` looked its types' metadata up at run time.
/// `ClaimSlots`, `CallGate` and `SharedDescriptor` are published the same way, for the same reason.
@_spi(Internals) public struct Lock<Value: ~Copyable>: ~Copyable {
    // Heap-allocated so that neither moves while another thread waits on or reads them.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    @_spi(Internals) public init(_ initialValue: consuming sending Value) {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// The corresponding C functions are `pthread_mutex_lock` and `pthread_mutex_unlock`: runs `body` on the
    /// value while no other thread can. Traps when this thread already holds the lock (it would never return).
    @inlinable @_spi(Internals)
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Lock.withLock: pthread_mutex_lock returned \(locked) (35, EDEADLK: already held)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    /// The corresponding C function is `pthread_mutex_trylock`: runs `body` on the value when no thread holds
    /// the lock, this one included; otherwise returns nil at once, without waiting and without trapping.
    @inlinable @_spi(Internals)
    public borrowing func withLockIfAvailable<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

extension Lock: @unchecked Sendable where Value: ~Copyable {}
