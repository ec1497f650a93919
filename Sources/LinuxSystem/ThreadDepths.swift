// Which threads are inside a stretch of code now, and how deep (a call may come back into it on the same
// thread): for a wait that must not wait for a thread that is itself waiting, or for itself.

/// Threads inside `run`'s body now, counted by `ServiceThread.currentID`. Thread-safe.
package final class ThreadDepths: Sendable {
    private let threads = Lock<[UInt: Int]>([:])

    package init() {}

    /// Runs `body` with the calling thread counted as inside.
    package func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let thread = ServiceThread.currentID
        threads.withLock { $0[thread, default: 0] += 1 }
        defer {
            threads.withLock { threads in
                threads[thread, default: 1] -= 1
                if threads[thread] == 0 { threads[thread] = nil }
            }
        }
        return try body()
    }

    /// Whether `thread` is inside now.
    package func contains(_ thread: UInt) -> Bool { threads.withLock { $0[thread] != nil } }

    /// Whether the calling thread is inside now.
    package var containsCurrent: Bool { contains(ServiceThread.currentID) }
}
