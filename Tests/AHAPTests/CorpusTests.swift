import Foundation
import Testing
@testable import AHAP
import AHAPFiles

/// The real-world corpus (`AHAP_CORPUS`): every file loads and reads as Foundation reads it, and the files whose
/// quirks the fixtures imitate behave as those fixtures do (`FixtureTests`).
@Suite(.corpus) struct CorpusTests {
    @Test func everyCorpusFileLoads() throws {
        FixtureTests.expectEveryFileLoadsWithoutErrors(try Corpus.files(), named: Corpus.name)
    }

    @Test func invalidFieldsWarnsAboutTheUnknownKeyAndLoads() throws {
        let report = AHAPValidator.validate(contentsOf: try Corpus.file("lofelt-nicevibrations/invalid_fields.ahap"))
        FixtureTests.expectMisspeltCurveIgnored(report)
    }

    @Test(arguments: ["Bounce", "Bouncing", "Close", "Jump", "Open", "Recharge", "Spin"])
    func appleSamplesWithTrailingCommasLoadWithALeniencyWarning(name: String) throws {
        let report = AHAPValidator.validate(contentsOf: try Corpus.file("apple-unityplugins/Effects/\(name).ahap"))
        #expect(report.loads)
        let lenient = report.diagnostics.filter { $0.code == .lenientSyntax }
        #expect(!lenient.isEmpty)
        #expect(lenient.allSatisfy { $0.severity == .warning && $0.line != nil })
    }

    @Test func audioEventsAreParsedAndKept() throws {
        let pattern = try HapticPattern(contentsOf: try Corpus.file("apple-unityplugins/Ricochet/CollisionSmall.ahap"))
        let audio = pattern.events.filter { $0.type == .audioCustom }
        #expect(audio.count == 1)
        #expect(audio.first?.waveformPath == "CoreHaptics/Ricochet/CollisionSmall.wav")
        #expect(audio.first?.value(of: .audioVolume) == 1)
        #expect(pattern.hapticEvents.count == 1)
    }

    @Test func sixteenAndSeventeenPointCurves() throws {
        let sixteen = try HapticPattern(contentsOf: try Corpus.file("lofelt-nicevibrations/16_points.ahap"))
        #expect(sixteen.parameterCurves.contains { $0.controlPoints.count == 16 })
        let seventeen = AHAPValidator.validate(contentsOf: try Corpus.file("lofelt-nicevibrations/17_points.ahap"))
        // Lofelt's exporter already split the 17-point curve (16 + 2 + 2), so no curve is over the limit.
        #expect(seventeen.pattern?.parameterCurves.map(\.controlPoints.count).sorted(by: >).first == 16)
        #expect(!seventeen.diagnostics.contains { $0.code == .tooManyControlPoints })
    }

    @Test func studioExportHasItsEventsAndCurves() throws {
        let pattern = try HapticPattern(contentsOf: try Corpus.file("lofelt-nicevibrations/studio_export.ahap"))
        #expect(pattern.events.count == 25)
        #expect(pattern.parameterCurves.count == 77)
        #expect(
            pattern.parameterCurves.allSatisfy {
                $0.controlPoints.count <= HapticParameterCurve.maximumControlPointCount
            })
        #expect(pattern.version == 1)
        #expect(pattern.duration > 9)
    }

    @Test func corpusValuesMatchFoundationsReading() throws {
        try FixtureTests.expectValuesMatchFoundationsReading(try Corpus.files(), named: Corpus.name)
    }
}
