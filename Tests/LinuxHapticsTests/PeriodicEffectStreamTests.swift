// A PID device's effects on the engine's clock (`PeriodicSourceCursor`) and the part of an effect a cue plays
// (`NativePeriodicEffect.section`): pure, measured here without a device.
import AHAP
import HapticRendering
@testable import LinuxHaptics
import LinuxInput
import Testing

@Suite struct PeriodicEffectStreamTests {
    /// Events at 0, 0.5 and 1 s: a continuous second with the longest attack and release AHAP gives (`AttackTime`
    /// and `ReleaseTime` 1), a transient, a 0.3 s tone.
    static let pattern = HapticPattern(
        events: [
            HapticEvent(
                type: .hapticContinuous,
                parameters: [
                    HapticEventParameter(parameterID: .hapticIntensity, value: 0.8),
                    HapticEventParameter(parameterID: .hapticSharpness, value: 0),
                    HapticEventParameter(parameterID: .attackTime, value: 1),
                    HapticEventParameter(parameterID: .releaseTime, value: 1),
                ], relativeTime: 0, duration: 1),
            HapticEvent(
                type: .hapticTransient,
                parameters: [
                    HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                    HapticEventParameter(parameterID: .hapticSharpness, value: 1),
                ], relativeTime: 0.5),
            HapticEvent(
                type: .hapticContinuous, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 0.4)],
                relativeTime: 1, duration: 0.3),
        ], parameters: [])

    static let program = NativePeriodicProgram(pattern: pattern, profile: .periodicForce)

    static func placed(_ source: PeriodicSource, start: Double, until limit: Double) -> [PlacedPeriodicEffect] {
        var cursor = PeriodicSourceCursor(source, start: start)
        var effects: [PlacedPeriodicEffect] = []
        while let next = cursor.next(startingBefore: limit) { effects.append(next) }
        return effects
    }

    @Test func aSourceFromTheStartPlacesEveryEffectAtItsEventsTimeInStartOrder() throws {
        #expect(Self.program.isExact)
        let effects = Self.placed(PeriodicSource(program: Self.program, offset: 0), start: 100, until: .infinity)
        try #require(effects.count == 3)
        #expect(effects.map(\.start) == [100, 100.5, 101])
        for (placed, compiled) in zip(effects, Self.program.effects) {
            #expect(abs(placed.end - placed.start - compiled.length) < 1e-9)
            #expect(placed.effect.delay == 0 && placed.effect.magnitude == compiled.magnitude)
            #expect(placed.effect.period == compiled.period)
        }
    }

    @Test func aCursorHandsOutOnlyTheEffectsStartingBeforeItsLimit() {
        var cursor = PeriodicSourceCursor(PeriodicSource(program: Self.program, offset: 0), start: 0)
        #expect(cursor.next(startingBefore: 0.4)?.start == 0)
        #expect(cursor.next(startingBefore: 0.4) == nil, "the transient at 0.5 is not near yet")
        #expect(cursor.next(startingBefore: 0.6)?.start == 0.5)
    }

    @Test func aSourceSoughtIntoAnEventStartsItsRestAtOnceAtTheLevelItHadThere() throws {
        let effects = Self.placed(PeriodicSource(program: Self.program, offset: 0.1), start: 10, until: .infinity)
        try #require(effects.count == 3)
        let first = effects[0]
        let compiled = Self.program.effects[0]
        try #require(compiled.attackLength > 0.1, "the seek lands inside the attack")
        #expect(first.start == 10 && abs(first.end - 10 - (compiled.length - 0.1)) < 1e-9)
        // Part way up its attack: the rest of the attack starts from the level the event had there.
        #expect(abs(first.effect.attackLength - (compiled.attackLength - 0.1)) < 1e-9)
        #expect(abs(first.effect.attackLevel - compiled.level(at: 0.1)) < 1e-9)
        #expect(first.effect.attackLevel > 0 && first.effect.attackLevel < compiled.magnitude)
        #expect(abs(effects[1].start - 10.4) < 1e-9)
        for time in stride(from: 0.0, to: compiled.length - 0.1, by: 0.01) {
            #expect(abs(first.effect.level(at: time) - compiled.level(at: time + 0.1)) < 1e-9, "at \(time)")
        }
    }

    @Test func aSourceAtTwiceTheRateHalvesEveryTimeButNotThePeriod() throws {
        let effects = Self.placed(PeriodicSource(program: Self.program, offset: 0, rate: 2), start: 0, until: .infinity)
        try #require(effects.count == 3)
        #expect(effects.map(\.start) == [0, 0.25, 0.5])
        let compiled = Self.program.effects[0]
        #expect(abs(effects[0].effect.length - compiled.length / 2) < 1e-9)
        #expect(abs(effects[0].effect.attackLength - compiled.attackLength / 2) < 1e-9)
        #expect(abs(effects[0].effect.fadeLength - compiled.fadeLength / 2) < 1e-9)
        #expect(effects[0].effect.period == compiled.period, "sharpness is not time")
    }

    /// A 30 s tone at rate 0.4 lasts 75 s, longer than a device is sent (0x7fff ms: hid-pidff sends 0xffff as the
    /// PID's "infinite", and that is where 75 s was clamped, so the effect never stopped). It is placed as pieces
    /// of at most 32.767 s, one after the other, with the same level over the whole.
    @Test func anEffectLongerThanADeviceTakesIsPlacedAsPiecesOneAfterTheOther() throws {
        let tone = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticContinuous,
                    parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 0.6)],
                    relativeTime: 1, duration: 30)
            ], parameters: [])
        let program = NativePeriodicProgram(pattern: tone, profile: .periodicForce)
        let effects = Self.placed(PeriodicSource(program: program, offset: 0, rate: 0.4), start: 10, until: .infinity)
        try #require(effects.count == 3, "\(effects.map { $0.end - $0.start })")
        #expect(abs(effects[0].start - 12.5) < 1e-9, "the event's 1 s at rate 0.4")
        for (piece, next) in zip(effects, effects.dropFirst()) {
            #expect(abs(piece.end - next.start) < 1e-9, "no gap and no overlap between pieces")
        }
        #expect(abs(effects.last!.end - (12.5 + 75)) < 1e-6)
        #expect(effects.allSatisfy { $0.effect.length <= NativePeriodicEffect.maximumLength + 1e-9 })
        #expect(effects.allSatisfy { ForceFeedbackEffect(periodic: $0.effect).replayLength <= 0x7fff })
        #expect(effects.allSatisfy { $0.effect.magnitude == effects[0].effect.magnitude })
        // An effect's own length past the limit is sent as the limit, never as 0xffff.
        var long = program.effects[0]
        long.length = 100
        #expect(long.lengthMilliseconds == 0x7fff)
    }

    @Test func aLoopingSourceRepeatsItsEffectsEveryLoopAndCutsThemAtTheLoopsEnd() {
        let source = PeriodicSource(program: Self.program, offset: 0, loopLength: 1.1)
        let effects = Self.placed(source, start: 0, until: 3.3)
        #expect(effects.map { ($0.start * 1000).rounded() / 1000 } == [0, 0.5, 1, 1.1, 1.6, 2.1, 2.2, 2.7, 3.2])
        // The third event (1 s to 1.3 s) is cut at the loop's end, 0.1 s in.
        #expect(abs(effects[2].end - 1.1) < 1e-9)
    }

    @Test func aLoopEndingBeforeItsLastEventHandsOutTheNextLoopAtItsTimeNotAfterThatEvent() {
        // A loop of 0.8 s: the event at 1 s lies past its end and never plays. The next loop's first effect, at
        // 0.8 s, is handed out as it comes near, not held back until 1 s (when it would have been too late).
        var cursor = PeriodicSourceCursor(PeriodicSource(program: Self.program, offset: 0, loopLength: 0.8), start: 0)
        #expect(cursor.next(startingBefore: 0.85)?.start == 0)
        #expect(cursor.next(startingBefore: 0.85)?.start == 0.5)
        #expect(cursor.next(startingBefore: 0.85)?.start == 0.8)
        #expect(cursor.next(startingBefore: 0.85) == nil)
        #expect(cursor.next(startingBefore: 1.65)?.start == 1.3)
    }

    @Test func theKernelEffectOfACompiledSineCarriesItsPeriodMagnitudeEnvelopeAndLength() {
        let compiled = Self.program.effects[0]
        let effect = ForceFeedbackEffect(periodic: compiled)
        guard case .periodic(let waveform, let period, let magnitude, _, _, let envelope) = effect.kind else {
            Issue.record("not a periodic effect")
            return
        }
        #expect(waveform == .sine && period == compiled.periodMilliseconds && magnitude == compiled.magnitudeUnits)
        #expect(envelope.attackLength == compiled.attackLengthMilliseconds && envelope.attackLength > 0)
        #expect(envelope.fadeLength == compiled.fadeLengthMilliseconds && envelope.fadeLength > 0)
        #expect(envelope.attackLevel == 0 && envelope.fadeLevel == 0)
        #expect(effect.replayLength == compiled.lengthMilliseconds && effect.replayDelay == 0)
    }
}
