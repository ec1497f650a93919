import Foundation
import Testing
@testable import AHAP
import AHAPFiles

/// The package's own AHAP fixtures, one quirk of real files each (docs/ahap.md, "Test fixtures"): each loads and
/// reads as it should, and every fixture reads as Foundation reads it.
@Suite struct FixtureTests {
    @Test func everyFixtureLoadsWithoutErrors() throws {
        Self.expectEveryFileLoadsWithoutErrors(try Fixtures.files(), named: Fixtures.name)
    }

    @Test func fixtureValuesMatchFoundationsReading() throws {
        try Self.expectValuesMatchFoundationsReading(try Fixtures.files(), named: Fixtures.name)
    }

    @Test func trailingCommasLoadWithALeniencyWarningEach() throws {
        let report = AHAPValidator.validate(contentsOf: try Fixtures.file("trailing-commas.ahap"))
        let pattern = try #require(report.pattern)
        let lenient = report.diagnostics.filter { $0.code == .lenientSyntax }
        #expect(lenient.count == 14)
        #expect(lenient.allSatisfy { $0.severity == .warning && $0.line != nil })
        #expect(report.diagnostics.count == lenient.count)
        #expect(pattern.events.map(\.type) == [.hapticTransient, .hapticContinuous])
        #expect(pattern.parameterCurves.first?.controlPoints.map(\.value) == [0.3, 1.0, 0.0])
        #expect(pattern.metadata?.entries["Project"] == "LinuxHaptics fixtures")
    }

    @Test func unknownKeysAtEveryLevelWarnWithTheirPathAndAreIgnored() throws {
        let report = AHAPValidator.validate(contentsOf: try Fixtures.file("unknown-keys.ahap"))
        let pattern = try #require(report.pattern)
        #expect(
            report.diagnostics.filter { $0.code == .unknownKey }.map(\.path) == [
                "Generator", "Pattern[0].Event.Colour", "Pattern[0].Event.EventParameters[0].Unit", "Pattern[0].Label",
                "Pattern[1].Parameter.Ramp", "Pattern[2].ParameterCurve.Interpolation",
                "Pattern[2].ParameterCurve.ParameterCurveControlPoints[0].Easing",
            ])
        #expect(report.diagnostics.allSatisfy { $0.code == .unknownKey && $0.severity == .warning })
        #expect(!report.passesStrict)
        // What the unknown keys sit beside is read; Metadata is free-form, so its own extra key is kept.
        #expect(pattern.events.first?.intensity == 0.7)
        #expect(pattern.dynamicParameters.map(\.value) == [0.2])
        #expect(pattern.parameterCurves.first?.controlPoints.count == 2)
        #expect(pattern.metadata?.entries["Tool"] == "kept as metadata")
    }

    @Test func parameterCurvesPluralWarnsAboutTheUnknownKeyAndLoads() throws {
        let report = AHAPValidator.validate(contentsOf: try Fixtures.file("parameter-curves-plural.ahap"))
        Self.expectMisspeltCurveIgnored(report)
    }

    @Test func nullValuesReadAsAbsentWithAWarningEach() throws {
        let report = AHAPValidator.validate(contentsOf: try Fixtures.file("null-values.ahap"))
        let pattern = try #require(report.pattern)
        #expect(
            report.diagnostics.map(\.path) == [
                "Metadata.Created", "Pattern[0].Event.EventWaveformPath", "Pattern[0].Event.EventDuration",
                "Pattern[1].Event.EventWaveformUseVolumeEnvelope", "Pattern[1].Event.EventWaveformLoopEnabled",
            ])
        #expect(report.diagnostics.allSatisfy { $0.code == .nullValue && $0.severity == .warning })
        #expect(pattern.metadata?.entries["Created"] == nil)
        #expect(pattern.events.allSatisfy { $0.waveformPath == nil && $0.waveformUsesVolumeEnvelope == nil })
        #expect(pattern.events.map(\.duration) == [nil, 0.3])
    }

    @Test func eventTimeAndParameterTimeReadAsTime() throws {
        let report = AHAPValidator.validate(contentsOf: try Fixtures.file("time-aliases.ahap"))
        let pattern = try #require(report.pattern)
        #expect(report.diagnostics.isEmpty)
        #expect(pattern.events.map(\.relativeTime) == [0, 0.2])
        #expect(pattern.dynamicParameters.map(\.relativeTime) == [0.3])
        #expect(pattern.parameterCurves.map(\.relativeTime) == [0.2])
        #expect(pattern.parameterCurves.first?.controlPoints.map(\.relativeTime) == [0, 0.5])
    }

    @Test func audioEventsAreKeptWhetherOrNotTheirFileIsThere() throws {
        let url = try Fixtures.file("audio-events.ahap")
        let pattern = try HapticPattern(contentsOf: url)
        let audio = pattern.events.filter { !$0.isHaptic }
        #expect(audio.map(\.type) == [.audioCustom, .audioCustom, .audioContinuous])
        #expect(audio.compactMap(\.waveformPath) == ["tone.wav", "missing-sound.wav"])
        #expect(audio.first?.value(of: .audioVolume) == 0.8)
        #expect(pattern.hapticEvents.count == 2)
        // One file is beside the pattern and one is not: the fixture has both cases on purpose.
        let folder = url.deletingLastPathComponent()
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("tone.wav").path))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing-sound.wav").path))
    }

    @Test func sixteenPointsPassAndSeventeenWarnUnlessSplit() throws {
        let sixteen = AHAPValidator.validate(contentsOf: try Fixtures.file("curve-16-points.ahap"))
        #expect(sixteen.pattern?.parameterCurves.map(\.controlPoints.count) == [16])
        #expect(sixteen.diagnostics.isEmpty)
        let seventeen = AHAPValidator.validate(contentsOf: try Fixtures.file("curve-17-points.ahap"))
        #expect(seventeen.pattern?.parameterCurves.map(\.controlPoints.count) == [17, 16, 2])
        let over = seventeen.diagnostics.filter { $0.code == .tooManyControlPoints }
        #expect(over.map(\.path) == ["Pattern[1].ParameterCurve.ParameterCurveControlPoints"])
        #expect(seventeen.diagnostics.count == 1 && over.first?.severity == .warning)
    }

    @Test func studioExportIsLargeAndHasItsEventsAndCurves() throws {
        let url = try Fixtures.file("studio-export.ahap")
        let size = try Data(contentsOf: url).count
        #expect(size > 150_000, "the parse benchmark's large input is \(size) bytes")
        let pattern = try HapticPattern(contentsOf: url)
        #expect(pattern.events.count == 25)
        #expect(pattern.parameterCurves.count == 80)
        #expect(pattern.parameterCurves.allSatisfy { $0.controlPoints.count == 16 || $0.controlPoints.count == 15 })
        #expect(pattern.version == 1)
        #expect(pattern.duration > 9)
    }

    @Test func everyEventTypeAndParameterAppears() throws {
        let report = AHAPValidator.validate(contentsOf: try Fixtures.file("every-event-and-parameter.ahap"))
        let pattern = try #require(report.pattern)
        #expect(report.diagnostics.isEmpty)
        #expect(Set(pattern.events.map(\.type)) == Set(HapticEvent.EventType.allCases))
        #expect(Set(pattern.events.flatMap { $0.parameters.map(\.parameterID) }) == Set(HapticEvent.ParameterID.known))
        #expect(Set(pattern.dynamicParameters.map(\.parameterID)) == Set(HapticDynamicParameter.ID.known))
        #expect(pattern.events.first { $0.type == .audioCustom }?.waveformUsesVolumeEnvelope == true)
        #expect(pattern.parameterCurves.count == 3)
    }

    // MARK: Checks shared with the corpus's tests

    /// Every file loads with no error.
    static func expectEveryFileLoadsWithoutErrors(_ files: [URL], named name: (URL) -> String) {
        for url in files {
            let report = AHAPValidator.validate(contentsOf: url)
            #expect(report.loads, "\(name(url)) does not load: \(report.errors)")
            #expect(report.errors.isEmpty, "\(name(url))")
        }
    }

    /// An independent check of the reader: the model read from text equals the model read from what
    /// JSONSerialization makes of the same bytes: same structure, same strings, and numbers within 16 ulps.
    /// Not bit-equal: Foundation's number parsing is off by up to 5 ulps on some 16- and 17-digit values
    /// (0.8910559341247216 comes back as ...211), where ours matches `Double(String)`, the correctly rounded
    /// reference (`JSONReaderTests`). On Linux, JSONSerialization also accepts trailing commas.
    static func expectValuesMatchFoundationsReading(_ files: [URL], named name: (URL) -> String) throws {
        for url in files {
            let data = try Data(contentsOf: url)
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let ours = try HapticPattern(data: data).exportDictionary()
            let theirs = try HapticPattern(dictionary: object).exportDictionary()
            #expect(nearlyEqual(ours, theirs), "\(name(url)) differs from Foundation's reading")
        }
    }

    /// A transient followed by a curve under the misspelt key `ParameterCurves`: one unknown-key warning at its
    /// path, the curve dropped and the event before it kept.
    static func expectMisspeltCurveIgnored(_ report: AHAPReport) {
        #expect(report.loads)
        #expect(!report.passesStrict)
        let unknown = report.diagnostics.filter { $0.code == .unknownKey }
        #expect(unknown.count == 1)
        #expect(unknown.first?.path == "Pattern[1].ParameterCurves")
        #expect(unknown.first?.severity == .warning)
        #expect(report.pattern?.events.count == 1)
        #expect(report.pattern?.parameterCurves.isEmpty == true)
    }

    /// Structural equality of exported dictionaries, with numbers compared to within 16 ulps.
    static func nearlyEqual(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case let (x as [String: Any], y as [String: Any]):
            return x.keys.sorted() == y.keys.sorted()
                && x.keys.allSatisfy { key in
                    guard let left = x[key], let right = y[key] else { return false }
                    return nearlyEqual(left, right)
                }
        case let (x as [Any], y as [Any]):
            return x.count == y.count && zip(x, y).allSatisfy { nearlyEqual($0, $1) }
        case let (x as String, y as String):
            return x == y
        case let (x as Bool, y as Bool):
            return x == y
        case let (x as Double, y as Double):
            return abs(x - y) <= 16 * Swift.max(x.ulp, y.ulp)
        default:
            return false
        }
    }
}
