// A player's state where Core Haptics says what its advanced player does: turning a loop off or moving its end
// while it plays, a rate of 0 or below, a seek past a loop's end, a curve's own relative time.
import AHAP
import HapticRendering
import Testing

@testable import LinuxHaptics

@Suite struct PlayerStateCoreHapticsTests {
    /// A 1 s pattern looping since engine time 10, at 13.3 (its fourth pass, 0.3 s in).
    static func loopingThreePasses() -> PlayerState {
        var player = PlayerState(timeline: timeline(pulse(1, 1, to: 1)))
        player.setLoopEnabled(true, at: 0)
        player.schedule(.start, at: 10)
        _ = player.advance(to: 13.3)
        return player
    }

    @Test func turningTheLoopOffPlaysTheCurrentPassOutToThePatternsEnd() {
        var player = Self.loopingThreePasses()
        player.setLoopEnabled(false, at: 13.3)
        #expect(abs(player.offset(at: 13.3) - 0.3) < 1e-9)
        #expect(player.advance(to: 13.9).isEmpty && player.phase == .playing)
        #expect(player.nextStateChange.map { abs($0 - 14) < 1e-9 } == true, "ends 0.7 s later, at 14")
        #expect(player.advance(to: 14) == [.finished])
    }

    @Test func aNewLoopEndGoesOnFromWhereThePlayerIsInThePattern() {
        var player = Self.loopingThreePasses()
        player.setLoopEnd(0.7, at: 13.3)
        #expect(abs(player.offset(at: 13.3) - 0.3) < 1e-9)
        #expect(abs(player.offset(at: 13.75) - 0.05) < 1e-9, "back to 0 at the new end, 0.4 s later")
    }

    @Test func aRateOfZeroOrBelowOrNotANumberChangesNothing() {
        var player = Self.loopingThreePasses()
        player.setRate(2, now: 13.3)
        for rate in [0, -1, .nan, .infinity] {
            player.setRate(rate, now: 13.4)
            #expect(player.rate == 2, "\(rate)")
        }
        player.setRate(1e-9, now: 13.4)
        #expect(player.rate == PlayerState.minimumRate)
    }

    @Test func aSeekAtOrPastTheLoopsLengthGoesToTheLoopsBeginning() {
        var player = Self.loopingThreePasses()
        player.seek(to: 2.5, now: 13.3)
        #expect(player.offset(at: 13.3) == 0)
        player.seek(to: 0.5, now: 13.3)
        #expect(player.offset(at: 13.3) == 0.5)
        var once = PlayerState(timeline: timeline(pulse(1, 1, to: 1)))
        once.seek(to: 2.5, now: 0)
        #expect(once.offset(at: 0) == 2.5, "without a loop, past the end: nothing left to play")
    }

    @Test func aScheduledCurveStartsAtItsTimeWhateverItsOwnRelativeTime() throws {
        let pattern = HapticPattern(
            events: [HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 2)], parameters: [])
        let source = PatternSource(pattern: pattern, renderer: PatternRenderer(profile: .genericRumble, locality: .all))
        var player = PlayerState(source: source)
        player.schedule(.start, at: 10)
        _ = player.advance(to: 10)
        let curve = HapticParameterCurve(
            parameterID: .hapticIntensityControl,
            controlPoints: [.init(relativeTime: 0, value: 0.5), .init(relativeTime: 0.1, value: 0.5)],
            relativeTime: 1)
        let controls = try #require(player.controls(scheduling: curve, at: 10.25, now: 10.25))
        #expect(controls.curves.map(\.relativeTime) == [0.25])
    }
}
