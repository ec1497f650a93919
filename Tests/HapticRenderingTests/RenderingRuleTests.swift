import AHAP
import HapticRendering
import Testing

/// The semantics of `docs/rendering.md`, one exact value at a time.
@Suite struct RenderingRuleTests {
    let renderer = PatternRenderer(profile: .genericRumble)
    let pulse = TransientPulse.rumbleMotor.length

    @Test func adjustersMapExponentiallyFromZeroToOneSecond() {
        #expect(EnvelopeTiming.seconds(forAdjuster: 0) == 0)
        #expect(close(EnvelopeTiming.seconds(forAdjuster: 1), 1))
        #expect(close(EnvelopeTiming.seconds(forAdjuster: 0.5), 15.0 / 255))
        #expect(close(EnvelopeTiming.seconds(forAdjuster: 0.75), 63.0 / 255))
        #expect(EnvelopeTiming.seconds(forAdjuster: -3) == 0)
        #expect(close(EnvelopeTiming.seconds(forAdjuster: 7), 1))
    }

    @Test func sharpnessSplitsTheLevelAndTheDominantMotorCarriesIt() {
        #expect(EnvelopeTiming.motorShares(sharpness: 0) == (1, 0))
        #expect(EnvelopeTiming.motorShares(sharpness: 0.5) == (1, 1))
        #expect(EnvelopeTiming.motorShares(sharpness: 1) == (0, 1))
        #expect(EnvelopeTiming.motorShares(sharpness: 0.25) == (1, 0.5))
        #expect(EnvelopeTiming.motorShares(sharpness: 0.75) == (0.5, 1))
    }

    @Test func aLoneTransientIsAFlatPulseOfTheProfileLength() {
        let timeline = renderer.render(Build.pattern([Build.transient(at: 0.1, intensity: 0.8, sharpness: 0.5)]))
        #expect(timeline.levels(at: 0.099) == .off)
        #expect(close(timeline.levels(at: 0.1), 0.8, 0.8))
        #expect(close(timeline.levels(at: 0.1 + pulse - 1e-6), 0.8, 0.8))
        #expect(timeline.levels(at: 0.1 + pulse) == .off)
        #expect(close(timeline.endTime, 0.1 + pulse))
    }

    @Test func transientSharpnessPicksTheMotors() {
        let dull = renderer.render(Build.pattern([Build.transient(at: 0, intensity: 0.6, sharpness: 0)]))
        let sharpish = renderer.render(Build.pattern([Build.transient(at: 0, intensity: 0.8, sharpness: 0.75)]))
        #expect(close(dull.levels(at: 0.01), 0.6, 0))
        #expect(close(sharpish.levels(at: 0.01), 0.4, 0.8))
    }

    @Test func aTransientDecaysLinearlyOverItsDecayTime() {
        let timeline = renderer.render(
            Build.pattern([Build.transient(at: 0, intensity: 0.8, sharpness: 0.5, decay: 0.5)]))
        let decay = 15.0 / 255
        #expect(close(timeline.levels(at: pulse), 0.8, 0.8))
        #expect(close(timeline.levels(at: pulse + decay / 2), 0.4, 0.4))
        #expect(close(timeline.endTime, pulse + decay))
    }

    @Test func aFlatContinuousHoldsItsLevelForItsDuration() {
        let timeline = renderer.render(
            Build.pattern([Build.continuous(at: 0.2, duration: 0.5, intensity: 0.6, sharpness: 0.25)]))
        #expect(timeline.levels(at: 0.1) == .off)
        #expect(close(timeline.levels(at: 0.2), 0.6, 0.3))
        #expect(close(timeline.levels(at: 0.69), 0.6, 0.3))
        #expect(timeline.levels(at: 0.7) == .off)
        #expect(timeline.endTime == 0.7)
        #expect(timeline.segments.count == 2, "one silent lead-in, one flat segment")
    }

    @Test func attackRampsUpAndReleaseRampsDownAfterTheEnd() {
        let event = Build.continuous(
            at: 0, duration: 2, intensity: 1, sharpness: 0, extra: [(.attackTime, 1), (.releaseTime, 1)])
        let timeline = renderer.render(Build.pattern([event]))
        #expect(close(timeline.levels(at: 0), 0, 0))
        #expect(close(timeline.levels(at: 0.5), 0.5, 0))
        #expect(close(timeline.levels(at: 1.5), 1, 0))
        #expect(close(timeline.levels(at: 2.5), 0.5, 0))
        #expect(close(timeline.endTime, 3))
    }

    @Test func anAttackLongerThanTheEventIsCutAtItsEnd() {
        let event = Build.continuous(at: 0, duration: 0.5, intensity: 1, sharpness: 0, extra: [(.attackTime, 1)])
        let timeline = renderer.render(Build.pattern([event]))
        #expect(close(timeline.levels(at: 0.25), 0.25, 0))
        #expect(timeline.levels(at: 0.5) == .off)
        #expect(close(timeline.endTime, 0.5))
    }

    @Test func anUnsustainedContinuousDecaysToSilenceOverItsDecayTime() {
        let event = Build.continuous(
            at: 0, duration: 1, intensity: 1, sharpness: 0, extra: [(.sustained, 0), (.decayTime, 0.75)])
        let timeline = renderer.render(Build.pattern([event]))
        let decay = 63.0 / 255
        #expect(close(timeline.levels(at: 0), 1, 0))
        #expect(close(timeline.levels(at: decay / 2), 0.5, 0))
        #expect(close(timeline.endTime, decay))
    }

    @Test func anUnsustainedContinuousWithDefaultDecayStillLastsOnePulse() {
        let event = Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0, extra: [(.sustained, 0)])
        let timeline = renderer.render(Build.pattern([event]))
        #expect(close(timeline.levels(at: pulse / 2), 0.5, 0))
        #expect(close(timeline.endTime, pulse))
    }

    @Test func anIntensityCurveMultipliesLinearly() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0), (1, 1)])])
        let timeline = renderer.render(pattern)
        #expect(close(timeline.levels(at: 0.25), 0.25, 0))
        #expect(close(timeline.levels(at: 0.8), 0.8, 0))
        #expect(timeline.segments.count == 1, "a linear product stays one segment")
    }

    @Test func aCurveActsOnEveryEventActiveAtThatTime() {
        let pattern = Build.pattern(
            [
                Build.transient(at: 0.2, intensity: 1, sharpness: 0),
                Build.transient(at: 0.6, intensity: 0.5, sharpness: 1),
            ],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 1), (1, 0)])])
        let timeline = renderer.render(pattern)
        #expect(close(timeline.levels(at: 0.2), 0.8, 0))
        #expect(close(timeline.levels(at: 0.6), 0, 0.2))
    }

    @Test func aSharpnessCurveAddsAndShiftsTheBalance() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0.5)],
            curves: [Build.curve(.hapticSharpnessControl, at: 0, [(0, 0), (1, 0.5)])])
        let timeline = renderer.render(pattern)
        #expect(close(timeline.levels(at: 0.5), 0.5, 1))
        #expect(close(timeline.levels(at: 0.9), 0.1, 1, within: 1e-6))
    }

    @Test func aCurveHoldsItsLastValueAfterItsLastPoint() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 2, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticIntensityControl, at: 0.5, [(0, 1), (0.5, 0.4)])])
        let timeline = renderer.render(pattern)
        #expect(close(timeline.levels(at: 0.25), 1, 0))
        #expect(close(timeline.levels(at: 0.75), 0.7, 0))
        #expect(close(timeline.levels(at: 1.5), 0.4, 0))
    }

    @Test func dynamicParametersStepFromTheirTimeOnAndClamp() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 0.8, sharpness: 0.75)],
            parameters: [
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0.5),
                HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.5, relativeTime: 0.5),
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 3, relativeTime: 0.8),
            ])
        let timeline = renderer.render(pattern)
        #expect(close(timeline.levels(at: 0.25), 0.4, 0.8))
        #expect(close(timeline.levels(at: 0.75), 0, 0.4), "sharpness 0.75 + 0.5 clamps to 1: weak only")
        #expect(close(timeline.levels(at: 0.9), 0, 0.8), "a control of 3 clamps to 1")
    }

    @Test func overlappingEventsSumAndSaturate() {
        let loud = renderer.render(
            Build.pattern([
                Build.transient(at: 0, intensity: 0.6, sharpness: 0.5),
                Build.transient(at: 0, intensity: 0.7, sharpness: 0.5),
            ]))
        let soft = renderer.render(
            Build.pattern([
                Build.transient(at: 0, intensity: 0.3, sharpness: 0.5),
                Build.transient(at: 0, intensity: 0.4, sharpness: 0.5),
            ]))
        let tapOnBed = renderer.render(
            Build.pattern([
                Build.continuous(at: 0, duration: 1, intensity: 0.5, sharpness: 0),
                Build.transient(at: 0.5, intensity: 0.25, sharpness: 0),
            ]))
        #expect(close(loud.levels(at: 0.01), 1, 1))
        #expect(close(soft.levels(at: 0.01), 0.7, 0.7))
        #expect(close(tapOnBed.levels(at: 0.4), 0.5, 0))
        #expect(close(tapOnBed.levels(at: 0.52), 0.75, 0), "a tap no louder than the bed is still felt")
    }

    @Test func localitiesPutTheWholeLevelOnOneMotor() {
        let pattern = Build.pattern([Build.transient(at: 0, intensity: 0.7, sharpness: 1)])
        let left = PatternRenderer(locality: .leftHandle).render(pattern)
        let right = PatternRenderer(locality: .rightHandle).render(pattern)
        #expect(close(left.levels(at: 0.01), 0.7, 0))
        #expect(close(right.levels(at: 0.01), 0, 0.7))
    }

    @Test func audioEventsAreSkipped() {
        let audio = HapticEvent(type: .audioContinuous, relativeTime: 0, duration: 1)
        let custom = HapticEvent(audioWaveformPath: "a.wav", relativeTime: 0.2)
        let timeline = renderer.render(Build.pattern([audio, custom]))
        #expect(timeline == .silent)
        #expect(timeline.endTime == 0)
    }

    @Test func runtimeControlsActLikePatternControlsAndWinWhenLater() {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            parameters: [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.8, relativeTime: 0.1)])
        var sent = RuntimeControls()
        sent.send(
            [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.25, relativeTime: 99)],
            atPatternTime: 0.5)
        var scheduled = RuntimeControls()
        scheduled.schedule(Build.curve(.hapticIntensityControl, at: 0, [(0, 1), (0.5, 0)]), atPatternTime: 0.5)
        #expect(close(renderer.render(pattern, controls: sent).levels(at: 0.25), 0.8, 0))
        #expect(close(renderer.render(pattern, controls: sent).levels(at: 0.75), 0.25, 0))
        #expect(close(renderer.render(pattern, controls: scheduled).levels(at: 0.75), 0.5, 0))
    }

    /// A control built in code as `.unknown("HapticIntensityControl")` is the intensity control: until 5 December
    /// the renderer ignored it (its switch saw an unknown identifier), though the encoder wrote it as the known one.
    @Test func aControlSpelledAsUnknownOfAKnownNameActsAsThatControl() {
        let control = HapticDynamicParameter(
            parameterID: .unknown("HapticIntensityControl"), value: 0.5, relativeTime: 0)
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)], parameters: [control])
        #expect(close(renderer.render(pattern).levels(at: 0.5), 0.5, 0))
        #expect(PatternControls(pattern: pattern).value(of: .hapticIntensityControl, at: 0.5) == 0.5)
    }

    @Test func aControlSentReplacesEverySourceSentBeforeForItsIdentifierOnly() {
        var controls = RuntimeControls()
        let intensity = { (value: Double) in
            HapticDynamicParameter(parameterID: .hapticIntensityControl, value: value, relativeTime: 0)
        }
        let sharpness = HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.2, relativeTime: 0)
        for step in 0..<10_000 {
            controls.send([intensity(Double(step) / 10_000), sharpness], atPatternTime: 0.001 * Double(step % 500))
        }
        #expect(controls.parameters.count == 2 && controls.curves.isEmpty)
        #expect(controls.parameters.first { $0.parameterID == .hapticIntensityControl }?.value == 0.9999)
        controls.schedule(Build.curve(.hapticIntensityControl, at: 0, [(0, 1), (0.5, 0)]), atPatternTime: 0.3)
        #expect(controls.parameters.map(\.parameterID) == [.hapticSharpnessControl] && controls.curves.count == 1)
        controls.send([intensity(0.5)], atPatternTime: 0.4, fromEachPassStart: true)
        #expect(controls.curves.isEmpty)
        #expect(
            controls.parameters.filter { $0.parameterID == .hapticIntensityControl }.map(\.relativeTime) == [0, 0.4])
    }

    @Test func theIntensityEnvelopeIgnoresTheMotorSplit() {
        let pattern = Build.pattern([Build.transient(at: 0, intensity: 0.6, sharpness: 0.9)])
        #expect(close(renderer.intensityEnvelope(pattern).levels(at: 0.01), 0.6, 0))
    }
}
