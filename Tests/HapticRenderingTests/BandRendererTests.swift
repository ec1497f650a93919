import AHAP
import HapticRendering
import Testing

/// HD rumble's bands: which band a carrier goes to, how carriers add, the actuator's total bound, and what the
/// band renderer reads from a pattern over one update.
@Suite struct BandRendererTests {
    static let crossover = SharpnessFrequencyMap.hdRumble.frequency(sharpness: 0.5)
    /// One update of 30 ms at the renderer's 3000 frames a second.
    static let update = 90

    @Test func theMapSpansThreeOctavesWithTheResonancesAtOneAndTwoThirds() {
        let map = SharpnessFrequencyMap.hdRumble
        #expect(map.frequency(sharpness: 0) == 80)
        #expect(abs(map.frequency(sharpness: 1) - 640) < 1e-9)
        #expect(abs(map.frequency(sharpness: 1.0 / 3) - 160) < 1e-6)
        #expect(abs(map.frequency(sharpness: 2.0 / 3) - 320) < 1e-6)
        #expect(abs(Self.crossover - 226.27) < 0.01)
    }

    @Test func aCarrierBelowTheCrossoverTakesTheLowBandAndAboveItTheHigh() {
        let dull = ActuatorBands.mixing([Carrier(frequency: 100, amplitude: 0.5)], crossover: Self.crossover)
        #expect(dull.low == Carrier(frequency: 100, amplitude: 0.5))
        #expect(dull.high == ActuatorBands.rest.high)
        let sharp = ActuatorBands.mixing([Carrier(frequency: 400, amplitude: 0.5)], crossover: Self.crossover)
        #expect(sharp.high == Carrier(frequency: 400, amplitude: 0.5))
        #expect(sharp.low == ActuatorBands.rest.low)
    }

    @Test func twoCarriersOfDifferentSharpnessSoundInTheirOwnBands() {
        let bands = ActuatorBands.mixing(
            [Carrier(frequency: 90, amplitude: 0.4), Carrier(frequency: 500, amplitude: 0.3)], crossover: Self.crossover
        )
        #expect(bands.low == Carrier(frequency: 90, amplitude: 0.4))
        #expect(bands.high == Carrier(frequency: 500, amplitude: 0.3))
    }

    @Test func carriersSharingABandAddByEnergyAtTheLoudestOnesFrequency() {
        let bands = ActuatorBands.mixing(
            [Carrier(frequency: 100, amplitude: 0.3), Carrier(frequency: 150, amplitude: 0.4)],
            crossover: Self.crossover)
        #expect(bands.low.frequency == 150)
        #expect(abs(bands.low.amplitude - 0.5) < 1e-12)
    }

    @Test func bothBandsTogetherNeverPassFullAmplitude() {
        let bands = ActuatorBands.mixing(
            [Carrier(frequency: 100, amplitude: 0.9), Carrier(frequency: 400, amplitude: 0.6)],
            crossover: Self.crossover)
        #expect(abs(bands.low.amplitude + bands.high.amplitude - 1) < 1e-12)
        #expect(abs(bands.low.amplitude / bands.high.amplitude - 1.5) < 1e-9)
    }

    @Test func silenceAndNonNumbersLeaveTheActuatorAtRest() {
        #expect(ActuatorBands.mixing([], crossover: Self.crossover) == .rest)
        #expect(
            ActuatorBands.mixing(
                [Carrier(frequency: .nan, amplitude: 1), Carrier(frequency: 100, amplitude: .infinity)],
                crossover: Self.crossover) == .rest)
        #expect(ActuatorBands.rest.isSilent)
    }

    @Test func aToneIsReadAtItsSharpnessFrequencyOnBothActuatorsThenNothingAfterItsEnd() {
        for sharpness in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let renderer = BandRenderer(
                pattern: Build.pattern([Build.continuous(at: 0, duration: 0.3, intensity: 1, sharpness: sharpness)]))
            let bands = renderer.bands(from: 300, count: Self.update)
            let wanted = SharpnessFrequencyMap.hdRumble.frequency(sharpness: sharpness)
            let band = wanted < Self.crossover ? bands.left.low : bands.left.high
            #expect(abs(band.frequency - wanted) < 1e-6)
            #expect(band.amplitude > 0.99)
            #expect(bands.left == bands.right)
            #expect(renderer.bands(from: renderer.endFrame, count: Self.update).left == .rest)
        }
    }

    @Test func aTransientShorterThanAnUpdateIsHeldAtItsPeakForThatUpdate() {
        // Two cycles at 640 Hz: a 3 ms burst, a tenth of the update that covers it.
        let renderer = BandRenderer(pattern: Build.pattern([Build.transient(at: 0.010, intensity: 1, sharpness: 1)]))
        let covering = renderer.bands(from: 0, count: Self.update)
        #expect(covering.left.high.amplitude > 0.99)
        #expect(abs(covering.left.high.frequency - 640) < 1e-6)
    }

    @Test func aHandleLocalityPlaysOnItsActuatorAlone() {
        let pattern = Build.pattern([Build.continuous(at: 0, duration: 0.3, intensity: 1, sharpness: 0.2)])
        let left = BandRenderer(pattern: pattern, locality: .leftHandle).bands(from: 30, count: Self.update)
        #expect(!left.left.isSilent && left.right.isSilent)
        let right = BandRenderer(pattern: pattern, locality: .rightHandle).bands(from: 30, count: Self.update)
        #expect(right.left.isSilent && !right.right.isSilent)
    }

    @Test func aRateOfTwoReadsThePatternTwiceAsFastAtTheSameFrequency() {
        let pattern = Build.pattern([
            Build.continuous(at: 0, duration: 0.2, intensity: 1, sharpness: 0),
            Build.continuous(at: 0.2, duration: 0.2, intensity: 1, sharpness: 1),
        ])
        let renderer = BandRenderer(pattern: pattern, playbackRate: 2)
        // 0.15 s of output is 0.3 s of pattern: the second event.
        let bands = renderer.bands(from: 450, count: Self.update)
        #expect(abs(bands.left.high.frequency - 640) < 1e-6 && bands.left.low.amplitude == 0)
    }

    /// The carriers of an update are found among the voices near it (two binary searches), not by a walk over the
    /// whole pattern: on a pattern of staggered, overlapping events of every kind, every update gives exactly what
    /// each event's own renderer gives for it, in pattern order (events sounding together are fewer than the limit,
    /// so each voice sounds as it does alone).
    @Test func eachUpdatesCarriersAreTheOnesEachEventGivesAloneInPatternOrder() {
        var events: [HapticEvent] = []
        for index in 0..<60 {
            let time = Double(index) * 0.037 + (index % 3 == 0 ? 0.5 : 0)
            let sharpness = HapticEventParameter(parameterID: .hapticSharpness, value: Double(index % 7) / 6)
            let intensity = HapticEventParameter(parameterID: .hapticIntensity, value: 0.3 + Double(index % 5) / 8)
            events.append(
                index % 4 == 0
                    ? HapticEvent(type: .hapticTransient, parameters: [intensity, sharpness], relativeTime: time)
                    : HapticEvent(
                        type: .hapticContinuous, parameters: [intensity, sharpness], relativeTime: time,
                        duration: index % 10 == 1 ? 1.5 : 0.05))
        }
        let whole = BandRenderer(pattern: HapticPattern(events: events, parameters: []))
        let alone = events.map { BandRenderer(pattern: HapticPattern(events: [$0], parameters: [])) }
        for frame in stride(from: 0, to: whole.endFrame + Self.update, by: Self.update) {
            let expected = alone.flatMap { $0.carriers(from: frame, count: Self.update).left }
            #expect(whole.carriers(from: frame, count: Self.update).left == expected, "frame \(frame)")
        }
    }
}

@Suite struct HapticLocalityNameTests {
    @Test func ourNamesAndCoreHapticsNamesNameTheSameLocalities() {
        #expect(HapticLocality(named: "left-trigger") == .leftTrigger)
        #expect(HapticLocality(named: "leftTrigger") == .leftTrigger)
        #expect(HapticLocality(named: "rightTrigger") == .rightTrigger)
        #expect(HapticLocality(named: "triggers") == .triggers)
        #expect(HapticLocality(named: "default") == .all)
        #expect(HapticLocality(named: "leftHandle") == .leftHandle)
        #expect(HapticLocality(named: "left") == .leftHandle)
        #expect(HapticLocality(named: "feet") == nil)
        #expect(HapticLocality.allCases.filter(\.isTrigger) == [.leftTrigger, .rightTrigger, .triggers])
    }

    @Test func aTriggerLocalityRendersTheWholeLevelOnItsMotor() {
        let pattern = Build.pattern([Build.continuous(at: 0, duration: 0.3, intensity: 0.8, sharpness: 0.9)])
        for (locality, strong, weak) in [
            (HapticLocality.leftTrigger, true, false), (.rightTrigger, false, true), (.triggers, true, true),
        ] {
            let timeline = PatternRenderer(locality: locality).render(pattern)
            let levels = timeline.levels(at: 0.15)
            #expect((levels.strong > 0.7) == strong && (levels.weak > 0.7) == weak)
            if locality == .triggers { #expect(levels.strong == levels.weak) }
        }
    }
}
