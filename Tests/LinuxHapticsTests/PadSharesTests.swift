// The streams engines of one process share on one pad: the last member's leaving ends a stream under the lock
// a join takes.
@testable import LinuxHaptics
@_spi(Internals) import LinuxSystem
import Testing

@Suite struct PadSharesTests {
    final class Stream: Sendable {}

    /// An engine that joins the pad while its last stream is ending starts its own once that one has ended (its
    /// last report written, its counter left for the next: `PadCounters`), never beside it. The end waits 50 ms to
    /// leave the join room to come first; it finds the lock held.
    @Test func aStreamStartedWhileTheLastOneEndsStartsOnceItHasEnded() throws {
        let shares = PadShares<Stream>()
        let first = try shares.joined("/dev/hidraw3", isUsable: { _ in true }) { Stream() }
        let ending = Lock(false)
        let ended = Lock(false)
        let leaver = try ServiceThread.start {
            shares.leave(first) { _ in
                ending.withLock { $0 = true }
                Sys.sleep(nanoseconds: 50_000_000)
                ended.withLock { $0 = true }
            }
        }
        while !ending.withLock({ $0 }) { Sys.yield() }
        let madeAfterTheEnd = Lock<Bool?>(nil)
        let second = try shares.joined("/dev/hidraw3", isUsable: { _ in true }) {
            madeAfterTheEnd.withLock { $0 = ended.withLock { $0 } }
            return Stream()
        }
        leaver.join()
        #expect(second !== first, "a stream that ended was joined")
        #expect(madeAfterTheEnd.withLock { $0 } == true)
    }
}
