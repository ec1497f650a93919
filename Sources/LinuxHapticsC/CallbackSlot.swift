// A C callback that engine threads call while the C program may replace it or destroy the engine: replacing
// it waits until no other thread is still inside the old one, so that the program may free the old `user`
// data as soon as the replacing call returns; but never for a thread that is itself waiting in such a call of
// any engine (two handlers that replace each other's, of one engine or of two, would otherwise wait for each other
// for ever).
import LinuxInput
@_spi(Internals) import LinuxSystem

/// A C function pointer and the `user` pointer the program gave with it. The library never reads the user
/// data; the program vouches that its function may use it on the engine's threads.
struct CCallback<Function>: @unchecked Sendable {
    let function: Function
    let user: UnsafeMutableRawPointer?
}

/// The threads waiting in a call of an engine that waits for other threads: a handler's replacement, the
/// engine's stop (which joins its threads) or its destruction.
final class WaitingCalls: Sendable {
    /// Shared by every engine's handlers: a handler of one engine replacing a handler of another, while that
    /// one's handler replaces its own, waits for neither.
    static let everyEngine = WaitingCalls()

    /// How deep each thread is in such calls (one may make another: a destroy replaces both handlers).
    private let threads = ThreadDepths()

    /// Runs `body` with the calling thread counted as waiting.
    func waiting<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try threads.run(body)
    }

    func contains(_ thread: UInt) -> Bool { threads.contains(thread) }

    /// How long a replacement waits for a handler to end before it looks again: a thread that starts waiting in a
    /// call of the engine meanwhile (which the replacement no longer waits for) signals nothing to it.
    static let recheckNanoseconds: UInt64 = 10_000_000
}

/// One handler of an engine (stopped, reset), called from any thread.
final class CallbackSlot<Function>: Sendable {
    private struct State {
        var callback: CCallback<Function>?
        /// The threads inside the callback now, with how deep (a callback may cause another on its thread).
        var callers: [UInt: Int] = [:]
    }

    private let state = Lock(State())
    /// Signalled each time a thread leaves the callback.
    private let left = DeadlineWaiter()
    /// The engine's threads waiting in a call that waits for others (this slot's `replace` counts itself there).
    private let waiting: WaitingCalls

    init(waiting: WaitingCalls) { self.waiting = waiting }

    /// Calls the callback, if there is one, through `invoke`.
    func call(_ invoke: (CCallback<Function>) -> Void) {
        let thread = ServiceThread.currentID
        let callback = state.withLock { state -> CCallback<Function>? in
            guard let callback = state.callback else { return nil }
            state.callers[thread, default: 0] += 1
            return callback
        }
        guard let callback else { return }
        invoke(callback)
        state.withLock { state in
            state.callers[thread, default: 1] -= 1
            if state.callers[thread] == 0 { state.callers[thread] = nil }
        }
        left.signal()
    }

    /// Installs `callback` (nil: none), then waits until no other thread is inside a callback of this slot:
    /// the one it replaced, or (briefly, should one start meanwhile) the new one. The calling thread may itself
    /// be inside one (a handler that replaces itself or destroys its engine): that call is not waited for. Nor
    /// is one whose thread is waiting in a call of an engine that waits for others (`WaitingCalls`): a handler
    /// replacing this one's twin, or another engine's, while this one replaces it, or stopping the engine, whose
    /// join waits for us.
    func replace(with callback: CCallback<Function>?) {
        let thread = ServiceThread.currentID
        waiting.waiting {
            state.withLock { $0.callback = callback }
            while state.withLock({ state in
                state.callers.keys.contains { $0 != thread && !waiting.contains($0) }
            }) {
                left.wait(untilNanoseconds: MonotonicTime.nanoseconds() + WaitingCalls.recheckNanoseconds)
            }
        }
        // Several threads may wait here at once, and a signal wakes one: pass it on.
        left.signal()
    }
}
