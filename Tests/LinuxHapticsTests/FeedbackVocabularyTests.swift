// The vocabulary's definitions against the reference app's numbers.
import AHAP
import LinuxHaptics
import AppHaptics
import Testing

@Suite struct FeedbackVocabularyTests {
    /// The guidance's ranges, written out again on purpose: a change to the definitions must fail here.
    static let ranges: [(ImpactStyle, ClosedRange<Double>, ClosedRange<Double>)] = [
        (.light, 0.3...0.5, 0.4...0.6), (.medium, 0.5...0.7, 0.4...0.6), (.heavy, 0.8...1.0, 0.4...0.6),
        (.soft, 0.5...0.7, 0.1...0.3), (.rigid, 0.5...0.7, 0.7...0.9),
    ]

    static func tap(_ feedback: HapticFeedback) throws -> HapticEvent {
        let events = feedback.pattern.events
        try #require(events.count == 1)
        return events[0]
    }

    @Test(arguments: ranges.indices)
    func impactDefaultsToTheMiddleOfItsRanges(_ index: Int) throws {
        let (style, intensity, sharpness) = Self.ranges[index]
        #expect(style.intensityRange == intensity && style.sharpnessRange == sharpness)
        let event = try Self.tap(.impact(style))
        #expect(event.type == .hapticTransient && event.relativeTime == 0)
        #expect(abs(event.intensity - (intensity.lowerBound + intensity.upperBound) / 2) < 1e-9)
        #expect(abs(event.sharpness - (sharpness.lowerBound + sharpness.upperBound) / 2) < 1e-9)
    }

    @Test(arguments: ImpactStyle.allCases)
    func intensityOverridePlacesTheImpactInItsRange(_ style: ImpactStyle) throws {
        let range = style.intensityRange
        #expect(try Self.tap(.impact(style, intensity: 0)).intensity == range.lowerBound)
        #expect(try Self.tap(.impact(style, intensity: 1)).intensity == range.upperBound)
        #expect(try Self.tap(.impact(style, intensity: 7)).intensity == range.upperBound)
        #expect(try Self.tap(.impact(style, intensity: -3)).intensity == range.lowerBound)
        let quarter = try Self.tap(.impact(style, intensity: 0.25)).intensity
        #expect(abs(quarter - (range.lowerBound + (range.upperBound - range.lowerBound) / 4)) < 1e-9)
        #expect(range.contains(try Self.tap(.impact(style, intensity: .nan)).intensity))
        // An infinity is past an end, as 7 and -3 are: clamped, not taken for the middle.
        #expect(try Self.tap(.impact(style, intensity: .infinity)).intensity == range.upperBound)
        #expect(try Self.tap(.impact(style, intensity: -.infinity)).intensity == range.lowerBound)
    }

    static func events(_ feedback: HapticFeedback) -> [HapticEvent] {
        feedback.pattern.events.sorted { $0.relativeTime < $1.relativeTime }
    }

    @Test func successIsTwoRisingTaps() {
        let taps = Self.events(.notification(.success))
        #expect(taps.count == 2)
        #expect(taps[1].intensity > taps[0].intensity && taps[1].sharpness > taps[0].sharpness)
    }

    @Test func warningIsTwoTapsWithTheEmphasisOnTheSecond() {
        let taps = Self.events(.notification(.warning))
        #expect(taps.count == 2)
        #expect(taps[1].intensity == 1.0 && taps[0].intensity < taps[1].intensity)
    }

    @Test func errorIsThreeRapidDescendingTaps() {
        let taps = Self.events(.notification(.error))
        #expect(taps.count == 3)
        #expect(taps[0].intensity > taps[1].intensity && taps[1].intensity > taps[2].intensity)
        #expect(taps.map(\.relativeTime) == [0, 0.08, 0.16])
    }

    @Test func selectionIsLighterThanTheLightestImpact() throws {
        let tick = try Self.tap(.selection)
        #expect(tick.intensity < ImpactStyle.light.intensityRange.lowerBound)
    }

    @Test(arguments: [HapticFeedback.selection, .impact(.heavy), .notification(.error), .notification(.warning)])
    func everyFeedbackIsAValidPattern(_ feedback: HapticFeedback) {
        #expect(feedback.pattern.validationDiagnostics().isEmpty)
        #expect(feedback.pattern.events.allSatisfy { $0.type == .hapticTransient })
    }

    @Test func appFeedbackMapsToTheDesignedCalls() {
        #expect(AppFeedback.success.feedback == .impact(.heavy))
        #expect(AppFeedback.pass.feedback == .impact(.rigid))
        #expect(AppFeedback.warning.feedback == .notification(.warning))
    }
}
