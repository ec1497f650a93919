// A C callback that engine threads call while the C program may replace it or destroy the engine: replacing
// it waits until no other thread is still inside the old one, so that the program may free the old `user`
// data as soon as the replacing call returns.
import LinuxInput
@_spi(Internals) import LinuxSystem

/// A C function pointer and the `user` pointer the program gave with it. The library never reads the user
/// data; the program vouches that its function may use it on the engine's threads.
struct CCallback<Function>: @unchecked Sendable {
    let function: Function
    let user: UnsafeMutableRawPointer?
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
    /// be inside one (a handler that replaces itself or destroys its engine): that call is not waited for.
    func replace(with callback: CCallback<Function>?) {
        let thread = ServiceThread.currentID
        state.withLock { $0.callback = callback }
        while state.withLock({ state in state.callers.keys.contains { $0 != thread } }) {
            left.wait(untilNanoseconds: nil)
        }
        // Several threads may wait here at once, and a signal wakes one: pass it on.
        left.signal()
    }
}
