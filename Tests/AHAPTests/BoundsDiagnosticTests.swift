// The engine's check before it plays a pattern: `boundsDiagnostic()` clears small patterns in one pass and must
// say exactly what the validator says about size and numbers, for real files and for patterns past each bound.
import AHAPFiles
import Foundation
import Testing

@Suite struct BoundsDiagnosticTests {
    static func transient(at time: Double, intensity: Double = 0.5) -> HapticEvent {
        HapticEvent(
            type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: intensity)],
            relativeTime: time)
    }

    static func validatorsBoundCode(_ pattern: HapticPattern) -> AHAPDiagnostic.Code? {
        pattern.validationDiagnostics().first { HapticPattern.boundCodes.contains($0.code) }?.code
    }

    @Test func agreesWithTheValidatorOnTheFixtures() throws {
        try Self.expectAgreement(on: try Fixtures.files())
    }

    @Test(.corpus) func agreesWithTheValidatorOnTheCorpus() throws {
        try Self.expectAgreement(on: try Corpus.files())
    }

    static func expectAgreement(on files: [URL]) throws {
        for file in files {
            let pattern = try HapticPattern(contentsOf: file)
            #expect(pattern.boundsDiagnostic()?.code == Self.validatorsBoundCode(pattern), "\(file.lastPathComponent)")
        }
    }

    @Test func agreesWithTheValidatorPastEachBound() {
        let curve = HapticParameterCurve(
            parameterID: .hapticIntensityControl,
            controlPoints: (0...10_000).map {
                HapticParameterCurve.ControlPoint(relativeTime: Double($0) / 1000, value: 1)
            },
            relativeTime: 0)
        let cases: [(String, HapticPattern, AHAPDiagnostic.Code?)] = [
            ("a tap", HapticPattern(events: [Self.transient(at: 0)], parameters: []), nil),
            ("NaN", HapticPattern(events: [Self.transient(at: 0, intensity: .nan)], parameters: []), .nonFiniteNumber),
            ("1e308 s", HapticPattern(events: [Self.transient(at: 1e308)], parameters: []), .timeTooLarge),
            ("infinite time", HapticPattern(events: [Self.transient(at: .infinity)], parameters: []), .nonFiniteNumber),
            (
                "100,001 entries",
                HapticPattern(events: (0...100_000).map { Self.transient(at: Double($0) / 1000) }, parameters: []),
                .limitExceeded
            ),
            (
                "10,001 control points", HapticPattern(events: [], parameters: [], parameterCurves: [curve]),
                .limitExceeded
            ),
        ]
        for (label, pattern, expected) in cases {
            #expect(Self.validatorsBoundCode(pattern) == expected, "the validator on \(label)")
            #expect(pattern.boundsDiagnostic()?.code == expected, "boundsDiagnostic on \(label)")
        }
    }
}
