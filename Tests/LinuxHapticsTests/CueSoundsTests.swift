// The sounds a stream plays for the players' cues (`CueSounds`): a cue that is gone ends its sound at the engine
// time it went, so that a stream running behind its clock still plays what came before (the end of a pattern whose
// player finished, what preceded a stop); a cue whose end moved ends its sound there.
@testable import LinuxHaptics
@_spi(Internals) import LinuxSystem
import Testing

@Suite struct CueSoundsTests {
    /// A stream that notes what it is told.
    private final class NotingStream: CueStream {
        enum Call: Equatable {
            case play(source: String, at: UInt64)
            case stopNow(Int)
            case stop(Int, at: UInt64)
        }

        var calls: [Call] = []
        private var nextID = 0

        func play(_ source: String, atNanoseconds startNanoseconds: UInt64) -> Int {
            defer { nextID += 1 }
            calls.append(.play(source: source, at: startNanoseconds))
            return nextID
        }

        func stop(_ id: Int) { calls.append(.stopNow(id)) }
        func stop(_ id: Int, atNanoseconds nanoseconds: UInt64) { calls.append(.stop(id, at: nanoseconds)) }
    }

    private let player = PlayerID.first
    private let cue = SoundCue(anchor: SoundAnchor(time: 1, offset: 0, rate: 1, revision: 0), end: nil)

    private func started() -> (CueSounds<NotingStream>, NotingStream) {
        let stream = NotingStream()
        var sounds = CueSounds<NotingStream>()
        sounds.start("tone", atNanoseconds: MonotonicClock.nanoseconds(1), for: player, cue: cue, on: stream)
        return (sounds, stream)
    }

    @Test func aGoneCueEndsItsSoundAtTheTimeItWentNotWhenTheStreamHearsOfIt() {
        var (sounds, stream) = started()
        let missing = sounds.reconcile([:], now: 2.5, on: stream)
        #expect(missing.isEmpty)
        #expect(
            stream.calls == [
                .play(source: "tone", at: MonotonicClock.nanoseconds(1)), .stop(0, at: MonotonicClock.nanoseconds(2.5)),
            ])
        #expect(sounds.isEmpty)
    }

    @Test func aCueWhoseEndMovedEndsItsSoundThereAndAKeptCueIsLeftAlone() {
        var (sounds, stream) = started()
        _ = sounds.reconcile([player: [cue]], now: 1.5, on: stream)
        #expect(stream.calls.count == 1, "the same cue: nothing to tell")
        var ending = cue
        ending.end = 3
        _ = sounds.reconcile([player: [ending]], now: 2, on: stream)
        #expect(stream.calls.last == .stop(0, at: MonotonicClock.nanoseconds(3)))
        #expect(!sounds.isEmpty)
    }

    @Test func stopAllStopsEverySoundAtOnce() {
        var (sounds, stream) = started()
        sounds.stopAll(on: stream)
        #expect(stream.calls.last == .stopNow(0))
        #expect(sounds.isEmpty)
    }
}
