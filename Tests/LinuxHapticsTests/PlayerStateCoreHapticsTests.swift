// A player's state where Core Haptics says what its advanced player does: turning a loop off or moving its end
// while it plays, a rate of 0 or below, a seek past a loop's end, a curve's own relative time, a control sent for a
// later time (held until then).
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
        try player.schedule(curve, at: 10.25, now: 10.25)
        #expect(player.controls.curves.map(\.relativeTime) == [0.25])
    }

    @Test func aControlHeldForLaterGivesItsCueAheadWhichIsTheOnePlayedFromItsTime() throws {
        let source = PatternSource(
            pattern: continuousPattern(intensity: 1, seconds: 2),
            renderer: PatternRenderer(profile: .genericRumble, locality: .all))
        let half = intensityControl(0.5)
        // Playing since 10, 0.5 sent at 10.2 for 11: the sounds and voice coils are told now of the stretch from
        // 11, with its controls, anchored where the player is anchored once it takes them.
        var player = PlayerState(source: source)
        player.schedule(.start, at: 10)
        _ = player.advance(to: 10.2)
        try player.send(half, at: 11, now: 10.2)
        #expect(player.controls == .none, "held until 11")
        let cues = player.cues()
        #expect(cues.count == 2 && cues.first?.end == 11 && cues.first?.controls == RuntimeControls.none)
        let ahead = try #require(cues.last)
        #expect(ahead.anchor.time == 11 && abs(ahead.anchor.offset - 1) < 1e-9 && ahead.end == nil)
        #expect(ahead.controls.parameters.map(\.value) == [0.5])
        _ = player.advance(to: 11)
        #expect(player.cues() == [ahead] && player.controls == ahead.controls)
        // The same for a start queued at 11 and a control held for 10.5: its cue carries the control.
        var waiting = PlayerState(source: source)
        waiting.schedule(.start, at: 11)
        try waiting.send(half, at: 10.5, now: 10.2)
        let start = try #require(waiting.cues().first)
        #expect(waiting.cues().count == 1 && start.anchor.time == 11 && start.controls.parameters.map(\.value) == [0.5])
        _ = waiting.advance(to: 11)
        #expect(waiting.cues() == [start])
    }

    @Test func aControlSentUnderHeldOnesOfItsIdentifierRendersOnlyItself() throws {
        // Steered ahead: an intensity held for each of the next 50 tenths of a second. An intensity sent now is
        // rendered alone (each held one sends its own); a sharpness sent now reaches all 50, each rendered again.
        var player = PlayerState(
            source: PatternSource(
                pattern: continuousPattern(intensity: 1, seconds: 10),
                renderer: PatternRenderer(profile: .genericRumble, locality: .all)))
        player.schedule(.start, at: 10)
        _ = player.advance(to: 10)
        for step in 1...50 {
            try player.send(intensityControl(Double(step) / 100), at: 10 + Double(step) / 10, now: 10)
        }
        #expect(
            try #require(player.controlsChange(sending: intensityControl(0.9), at: 10, now: 10)).controls.count == 1)
        let sharpness = [HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.2, relativeTime: 0)]
        #expect(try #require(player.controlsChange(sending: sharpness, at: 10, now: 10)).controls.count == 51)
        // Sent, each held one still acts at its time with its own value, and with the sharpness.
        try player.send(intensityControl(0.9), at: 10, now: 10)
        try player.send(sharpness, at: 10, now: 10)
        _ = player.advance(to: 10.25)
        #expect(player.heldControls.count == 48)
        let values = player.controls.parameters.map { [$0.parameterID == .hapticIntensityControl ? 1 : 2, $0.value] }
        #expect(values == [[2, 0.2], [1, 0.02]])
    }

    @Test func cancelDropsTheControlsHeldForLater() throws {
        let source = PatternSource(
            pattern: continuousPattern(intensity: 1, seconds: 2),
            renderer: PatternRenderer(profile: .genericRumble, locality: .all))
        var player = PlayerState(source: source)
        player.schedule(.start, at: 10)
        _ = player.advance(to: 10)
        try player.send(
            intensityControl(0.5), at: 11,
            now: 10)
        #expect(player.nextStateChange == 11)
        player.cancel()
        _ = player.advance(to: 11.5)
        #expect(player.heldControls.isEmpty && player.controls == .none)
    }

    /// Random sends (for now and for later), curves, seeks, pauses, rates and restarts, each followed by the held
    /// controls placed again as the engine places them: the held controls stay in time order, every change is
    /// taken, and the cue a player gives ahead for its first held control is the one it plays once it took it.
    @Test(arguments: [false, true])
    func heldControlsStayInOrderAndTheCueAheadIsTheOnePlayedAfter(loops: Bool) throws {
        var random = SeededGenerator(seed: loops ? 0xC0DE : 0xFEED)
        let source = PatternSource(
            pattern: continuousPattern(intensity: 1, seconds: 1.5),
            renderer: PatternRenderer(profile: .genericRumble, locality: .all))
        var player = PlayerState(source: source)
        player.setLoopEnabled(loops, at: 0)
        player.schedule(.start, at: 10)
        var now = 10.0
        var aheadChecked = 0
        for step in 0..<400 {
            now += Double.random(in: 0...0.05, using: &random)
            _ = player.advance(to: now)
            let later = now + Double.random(in: 0...0.6, using: &random)
            let value = Double.random(in: 0...1, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1, 2:
                try player.send(
                    intensityControl(value),
                    at: Bool.random(using: &random) ? now : later, now: now)
            case 3:
                try player.schedule(
                    HapticParameterCurve(
                        parameterID: .hapticSharpnessControl,
                        controlPoints: [
                            .init(relativeTime: 0, value: 0), .init(relativeTime: 0.2, value: value - 0.5),
                        ],
                        relativeTime: 0), at: later, now: now)
            case 4: player.seek(to: value * 1.5, now: now)
            case 5:
                player.schedule(.pause, at: later)
                player.schedule(.resume, at: later + value * 0.2)
            case 6: player.setRate(0.5 + value * 1.5, now: now)
            default: player.schedule(.start, at: later)
            }
            try player.placeHeldControlsAgain(at: now)
            let times = player.heldControls.map(\.time)
            #expect(times == times.sorted(), "step \(step)")
            let cues = player.cues()
            guard player.phase == .playing, cues.count == 2, let held = player.heldControls.first,
                cues[1].anchor.time == held.time
            else { continue }
            var taken = player
            _ = taken.advance(to: held.time)
            guard taken.phase == .playing else { continue }
            #expect(taken.cues().first?.anchor == cues[1].anchor, "step \(step)")
            #expect(taken.cues().first?.controls == cues[1].controls, "step \(step)")
            aheadChecked += 1
        }
        #expect(aheadChecked > 20, "cues ahead checked: \(aheadChecked)")
    }
}

extension PlayerState {
    /// The held controls placed again as the engine places them after a call (`heldControlsPlacedAgain`).
    mutating func placeHeldControlsAgain(at now: Double) throws {
        guard let change = heldControlsPlacedAgain() else { return }
        try make(change, at: now)
    }

    /// Sends `parameters` as the engine does (`EngineCore.changeControls`): the change worked out, rendered, taken.
    mutating func send(_ parameters: [HapticDynamicParameter], at time: Double, now: Double) throws {
        try make(try #require(controlsChange(sending: parameters, at: time, now: now)), at: now)
    }

    /// Schedules `curve` as the engine does.
    mutating func schedule(_ curve: HapticParameterCurve, at time: Double, now: Double) throws {
        try make(try #require(controlsChange(scheduling: curve, at: time, now: now)), at: now)
    }

    private mutating func make(_ change: ControlsChange, at now: Double) throws {
        let source = try #require(self.source)
        #expect(take(change, rendered: change.controls.map { source.rendered(with: $0) }, at: now))
    }
}
