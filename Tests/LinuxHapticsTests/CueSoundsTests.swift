// The sounds a stream plays for the players' cues (`CueSounds`): a cue that is gone ends its sound at the engine
// time it went, so that a stream running behind its clock still plays what came before (the end of a pattern whose
// player finished, what preceded a stop); a cue whose end moved ends its sound there.
import HapticTestDevices
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

    /// `reconcile(players:now:on:)` for one player whose cue is `cue`, muted or not, at `now`: the cues its sounds
    /// are to be made from, started on `stream` (as `Lock.follow` starts them).
    private func reconcile(
        _ sounds: inout CueSounds<NotingStream>, on stream: NotingStream, muted: Bool, now: Double
    ) -> [SoundCue] {
        let player = WaveformPlayer(cues: [cue], pattern: AHAPFixtures.tap(), isMuted: muted)
        let missing = sounds.reconcile(players: [self.player: player], now: now, on: stream)
        for (player, cue, _, start) in missing {
            sounds.start(
                "waveform", atNanoseconds: MonotonicClock.nanoseconds(start), for: player, cue: cue, on: stream)
        }
        return missing.map(\.heard)
    }

    /// A player muted and unmuted while it plays gives its cue again, still anchored at its start (offset 0): the
    /// voice coils play such a cue whole, from the pattern's top, as the start it reads as. Heard again, it is
    /// given anchored where the player is (until 7 December the coils played the pattern again from the top at
    /// every unmute, its tap twice, behind the engine's clock from then on).
    @Test func aCueHeardAgainAfterAMuteIsGivenAnchoredWhereItsPlayerIsNotAtItsStart() {
        let stream = NotingStream()
        var sounds = CueSounds<NotingStream>()
        #expect(reconcile(&sounds, on: stream, muted: false, now: 0.5) == [cue], "a start is given as it is")
        #expect(reconcile(&sounds, on: stream, muted: true, now: 1.2).isEmpty)
        #expect(stream.calls.last == .stop(0, at: MonotonicClock.nanoseconds(1.2)), "muted, its sound ends")
        let heard = reconcile(&sounds, on: stream, muted: false, now: 1.5)
        #expect(heard.map { $0.anchor.time } == [1.5])
        #expect(heard.map { $0.anchor.offset } == [0.5], "heard again where the player is, 0.5 s in")
        #expect(stream.calls.last == .play(source: "waveform", at: MonotonicClock.nanoseconds(1.5)))
    }

    /// The same for a player started while muted (or while the engine's haptics were): its start, passed unheard,
    /// is not played from the top when it is unmuted.
    @Test func aCueStartedWhileMutedIsGivenAnchoredWhereItsPlayerIsWhenHeard() {
        let stream = NotingStream()
        var sounds = CueSounds<NotingStream>()
        #expect(reconcile(&sounds, on: stream, muted: true, now: 0.5).isEmpty)
        #expect(reconcile(&sounds, on: stream, muted: true, now: 1.1).isEmpty)
        #expect(stream.calls.isEmpty)
        #expect(reconcile(&sounds, on: stream, muted: false, now: 1.25).map { $0.anchor.offset } == [0.25])
    }

    /// A player the stream stops hearing of (it finished, or was removed) and a cue at the same anchor given after
    /// it: a start, given as it is.
    @Test func aCueOfAPlayerNoLongerGivenIsAStartWhenGivenAgain() {
        let stream = NotingStream()
        var sounds = CueSounds<NotingStream>()
        #expect(reconcile(&sounds, on: stream, muted: true, now: 0.5).isEmpty)
        #expect(sounds.reconcile(players: [:], now: 0.6, on: stream).isEmpty)
        #expect(reconcile(&sounds, on: stream, muted: false, now: 0.7) == [cue])
    }

    @Test func stopAllStopsEverySoundAtOnce() {
        var (sounds, stream) = started()
        sounds.stopAll(on: stream)
        #expect(stream.calls.last == .stopNow(0))
        #expect(sounds.isEmpty)
    }
}
