// A service thread's handle, kept in a lock by what the thread serves, when the thread itself ends that service.
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct ServiceThreadTests {
    @Test func aThreadThatEndsItsOwnServiceLetsGoOfItsHandleDetachedSoNothingIsLeftToJoin() {
        let held = Lock<ServiceThread?>(nil)
        let handedOver = DeadlineWaiter()
        let done = DeadlineWaiter()
        let started: ServiceThread
        do {
            started = try ServiceThread.start {
                handedOver.wait(untilNanoseconds: nil)
                // A stream closed from its own thread: it cannot join itself.
                held.joinUnlessCurrent()
                done.signal()
            }
        } catch {
            Issue.record("no thread: \(error)")
            return
        }
        held.withLock { $0 = started }
        handedOver.signal()
        done.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 10_000_000_000)
        // Kept, the handle would be joined by nothing (the stream is gone once its thread ends) and the ended
        // thread's stack held for the life of the process.
        #expect(held.withLock { $0 == nil }, "the handle was let go (the thread detached)")
        held.joinUnlessCurrent()
    }
}
