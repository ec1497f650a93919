import Testing
@testable import AHAP

@Suite struct ModelTests {
    @Test func eventDefaultsFollowCoreHaptics() {
        let event = HapticEvent(type: .hapticTransient, relativeTime: 0)
        #expect(event.intensity == 1)
        #expect(event.sharpness == 0.5)
        #expect(event.attackTime == 0 && event.decayTime == 0 && event.releaseTime == 0)
        #expect(event.isSustained)
        #expect(event.effectiveDuration == 0)
    }

    @Test func typedAccessorsClampAndLastParameterWins() {
        let event = HapticEvent(
            type: .hapticContinuous,
            parameters: [
                .init(parameterID: .hapticIntensity, value: 0.2),
                .init(parameterID: .hapticIntensity, value: 1.7),
                .init(parameterID: .hapticSharpness, value: -3),
                .init(parameterID: .sustained, value: 0),
            ],
            relativeTime: 1, duration: 45)
        #expect(event.intensity == 1)
        #expect(event.value(of: .hapticIntensity) == 1.7)
        #expect(event.sharpness == 0)
        #expect(!event.isSustained)
        #expect(event.effectiveDuration == HapticEvent.maximumContinuousDuration)
    }

    /// An `AudioCustom` event's `EventDuration` is its length, capped as a continuous event's; without one, its
    /// length is its file's, which the event does not know (0). A transient has none whatever it says.
    @Test func anAudioCustomEventLastsItsEventDurationCappedAndATransientNothing() {
        let custom = { (duration: Double?) in HapticEvent(type: .audioCustom, relativeTime: 0, duration: duration) }
        #expect(custom(1.5).effectiveDuration == 1.5)
        #expect(custom(45).effectiveDuration == HapticEvent.maximumContinuousDuration)
        #expect(custom(-1).effectiveDuration == 0)
        #expect(custom(nil).effectiveDuration == 0)
        #expect(HapticEvent(type: .hapticTransient, relativeTime: 0, duration: 2).effectiveDuration == 0)
        let pattern = HapticPattern(
            events: [custom(45), HapticEvent(type: .hapticTransient, relativeTime: 40)], parameters: [])
        #expect(pattern.duration == 40)
        #expect(
            HapticPattern(events: [HapticEvent(type: .audioCustom, relativeTime: 2, duration: 45)], parameters: [])
                .duration == 32)
    }

    /// A transient's tap is as long as the system makes it (`effectiveDuration` 0), and its `EventDuration` is its
    /// logical length: Core Haptics pads the pattern to it, for its end and its loop point. Capped as a continuous
    /// event's; without one, an instant.
    @Test func aTransientsEventDurationPadsItsPatternButNotItsTap() {
        let tap = { (time: Double, duration: Double?) in
            HapticEvent(type: .hapticTransient, relativeTime: time, duration: duration)
        }
        #expect(tap(0, 1).effectiveDuration == 0 && tap(0, 1).logicalDuration == 1)
        #expect(tap(0, nil).logicalDuration == 0 && tap(0, -1).logicalDuration == 0)
        #expect(tap(0, 45).logicalDuration == HapticEvent.maximumContinuousDuration)
        #expect(HapticPattern(events: [tap(0.5, 1), tap(1, nil)], parameters: []).duration == 1.5)
        let continuous = HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 2)
        #expect(continuous.logicalDuration == continuous.effectiveDuration)
    }

    @Test func identifiersKeepUnknownNames() {
        #expect(HapticEvent.ParameterID(rawValue: "HapticIntensity") == .hapticIntensity)
        #expect(HapticEvent.ParameterID(rawValue: "Wobble") == .unknown("Wobble"))
        #expect(HapticEvent.ParameterID.unknown("Wobble").rawValue == "Wobble")
        for id in HapticEvent.ParameterID.known { #expect(HapticEvent.ParameterID(rawValue: id.rawValue) == id) }
        for id in HapticDynamicParameter.ID.known {
            #expect(HapticDynamicParameter.ID(rawValue: id.rawValue) == id)
        }
        #expect(HapticDynamicParameter.ID(rawValue: "Foo") == .unknown("Foo"))
    }

    /// `.unknown` of a known name, built in code, is that identifier: equal, hashed alike, with its range and
    /// default, and a pattern holding it equals itself read back from its AHAP text (until 5 December it read
    /// back as `.hapticIntensity` and compared unequal, and the renderer ignored such a control).
    @Test func anUnknownOfAKnownNameIsThatIdentifier() throws {
        for id in HapticEvent.ParameterID.known {
            let spelled = HapticEvent.ParameterID.unknown(id.rawValue)
            #expect(spelled == id && Set([spelled, id]).count == 1)
            #expect(
                spelled.range == id.range && spelled.defaultValue == id.defaultValue && spelled.isHaptic == id.isHaptic)
        }
        for id in HapticDynamicParameter.ID.known {
            let spelled = HapticDynamicParameter.ID.unknown(id.rawValue)
            #expect(spelled == id && Set([spelled, id]).count == 1)
            #expect(spelled.range == id.range && spelled.controlledEventParameter == id.controlledEventParameter)
        }
        #expect(HapticEvent.ParameterID.unknown("Wobble") != .unknown("Wobble2"))
        #expect(HapticEvent.ParameterID.unknown("Wobble") != .hapticIntensity)
        let pattern = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticTransient,
                    parameters: [HapticEventParameter(parameterID: .unknown("HapticIntensity"), value: 0.3)],
                    relativeTime: 0)
            ],
            parameters: [
                HapticDynamicParameter(parameterID: .unknown("HapticIntensityControl"), value: 0.5, relativeTime: 0)
            ])
        #expect(try HapticPattern(data: pattern.ahapData()) == pattern)
        #expect(pattern.events[0].intensity == 0.3)
    }

    @Test func dynamicParametersMultiplyOrAddThenClamp() {
        #expect(HapticDynamicParameter.ID.hapticIntensityControl.apply(0.5, to: 0.8) == 0.4)
        #expect(HapticDynamicParameter.ID.hapticIntensityControl.apply(3, to: 0.8) == 0.8)
        #expect(HapticDynamicParameter.ID.hapticSharpnessControl.apply(0.25, to: 0.5) == 0.75)
        #expect(HapticDynamicParameter.ID.hapticSharpnessControl.apply(1, to: 0.5) == 1)
        #expect(HapticDynamicParameter.ID.hapticSharpnessControl.apply(-1, to: 0.5) == 0)
        #expect(HapticDynamicParameter.ID.audioPanControl.apply(-0.5, to: -0.75) == -1)
        #expect(HapticDynamicParameter.ID.unknown("X").apply(0.1, to: 0.3) == 0.3)
        for id in HapticDynamicParameter.ID.known {
            #expect(id.apply(id.defaultValue ?? .nan, to: 0.5) == 0.5, "default of \(id) must be neutral")
        }
    }

    @Test func curveInterpolatesLinearlyAndHoldsEnds() {
        let curve = HapticParameterCurve(
            parameterID: .hapticIntensityControl,
            controlPoints: [.init(relativeTime: 0, value: 0), .init(relativeTime: 1, value: 1)],
            relativeTime: 2)
        #expect(curve.value(atPatternTime: 1) == 0)
        #expect(curve.value(atPatternTime: 2.25) == 0.25)
        #expect(curve.value(atPatternTime: 9) == 1)
        #expect(curve.endTime == 3)
    }

    @Test func patternDurationCoversEventsParametersAndCurves() {
        let pattern = HapticPattern(
            events: [
                HapticEvent(type: .hapticTransient, relativeTime: 0.5),
                HapticEvent(type: .hapticContinuous, relativeTime: 1, duration: 0.5),
                HapticEvent(audioWaveformPath: "a.wav", relativeTime: 0),
            ],
            parameterCurves: [
                HapticParameterCurve(
                    parameterID: .hapticSharpnessControl,
                    controlPoints: [.init(relativeTime: 0, value: 0), .init(relativeTime: 0.25, value: 1)],
                    relativeTime: 1.5)
            ])
        #expect(pattern.duration == 1.75)
        #expect(pattern.hapticEvents.count == 2)
    }

    @Test func anAudioCustomEventCountsInThePatternsDurationWithItsEventDurationCappedAt30Seconds() throws {
        let haptic = HapticEvent(type: .hapticTransient, relativeTime: 0.5)
        func duration(_ sound: HapticEvent) -> Double {
            HapticPattern(events: [haptic, sound], parameters: []).duration
        }
        #expect(duration(HapticEvent(audioWaveformPath: "a.wav", relativeTime: 1, duration: 2)) == 3)
        #expect(duration(HapticEvent(audioWaveformPath: "a.wav", relativeTime: 1, duration: 45)) == 31)
        #expect(duration(HapticEvent(audioWaveformPath: "a.wav", relativeTime: 1)) == 1, "its file is not read")
        let text = #"""
            {"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"a.wav","EventDuration":45}}]}
            """#
        let report = AHAPValidator.validate(data: text.utf8Data)
        #expect(report.warnings.map(\.code) == [.durationTooLong])
        #expect(report.warnings.first?.path == "Pattern[0].Event.EventDuration")
        #expect(try HapticPattern(data: text.utf8Data).duration == 30)
    }
}

/// `AudioResourcePath`: the rule by which an `AudioCustom` path leads to a file, shared by the engine's loader and
/// the validator.
struct AudioResourcePathTests {
    @Test func anEmptyPathADotDotComponentOrANULNamesNoFileAndOtherPathsMay() {
        #expect(AudioResourcePath.refusal(of: "") == "is empty")
        for path in ["../up.wav", "sounds/../../up.wav", "/abs/../up.wav", ".."] {
            #expect(AudioResourcePath.refusal(of: path) == "leaves its folder (a '..' component)", "\(path)")
        }
        for path in ["a.wav\u{0}", "\u{0}/etc/passwd", "sounds/a.wav\u{0}.mp3"] {
            #expect(
                AudioResourcePath.refusal(of: path) == "holds a NUL character, which no file name can",
                "\(path.debugDescription)")
        }
        for path in ["a.wav", "sounds/a.wav", "/abs/a.wav", "..a.wav", "a..wav", "./a.wav"] {
            #expect(AudioResourcePath.refusal(of: path) == nil, "\(path)")
        }
    }

    @Test func anAbsolutePathIsItselfAndARelativeOneIsInsideEachFolderInOrder() {
        #expect(AudioResourcePath.candidates(for: "/abs/a.wav", in: ["/one", "/two"]) == ["/abs/a.wav"])
        #expect(
            AudioResourcePath.candidates(for: "s/a.wav", in: ["/one", "/two/", "rel"])
                == ["/one/s/a.wav", "/two/s/a.wav", "rel/s/a.wav"])
        #expect(AudioResourcePath.candidates(for: "a.wav", in: []).isEmpty)
    }
}

/// `HapticEvent.audioWaveform`: what an `AudioCustom` event plays.
struct AudioWaveformTests {
    @Test func anAudioCustomEventPlaysItsResourceWhenItHasOneElseItsFileAndOtherEventsPlayNone() {
        var event = HapticEvent(audioWaveformPath: "a.wav", relativeTime: 0)
        #expect(event.audioWaveform == .path("a.wav"))
        event.audioResourceID = AudioResourceID(rawValue: 4)
        #expect(event.audioWaveform == .resource(AudioResourceID(rawValue: 4)))
        #expect(HapticEvent(type: .audioCustom, relativeTime: 0).audioWaveform == nil)
        var tone = HapticEvent(type: .audioContinuous, relativeTime: 0, duration: 1)
        tone.waveformPath = "a.wav"
        #expect(tone.audioWaveform == nil)
        #expect(AudioWaveform.resource(AudioResourceID(rawValue: 4)).description == "audio resource 4")
        #expect(AudioWaveform.path("s/a.wav").description == "s/a.wav")
    }
}
