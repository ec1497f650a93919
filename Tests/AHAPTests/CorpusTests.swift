import Foundation
import Testing
@testable import AHAP

@Suite struct CorpusTests {
    @Test func everyCorpusFileLoads() throws {
        for url in try Corpus.files() {
            let report = AHAPValidator.validate(contentsOf: url)
            #expect(report.loads, "\(Corpus.name(url)) does not load: \(report.errors)")
            #expect(report.errors.isEmpty)
        }
    }

    @Test func invalidFieldsWarnsAboutTheUnknownKeyAndLoads() throws {
        let report = AHAPValidator.validate(contentsOf: try Corpus.file("lofelt-nicevibrations/invalid_fields.ahap"))
        #expect(report.loads)
        #expect(!report.passesStrict)
        let unknown = report.diagnostics.filter { $0.code == .unknownKey }
        #expect(unknown.count == 1)
        #expect(unknown.first?.path == "Pattern[1].ParameterCurves")
        #expect(unknown.first?.severity == .warning)
        // The misspelt curve is dropped; the event before it is kept.
        #expect(report.pattern?.events.count == 1)
        #expect(report.pattern?.parameterCurves.isEmpty == true)
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
        // An independent check of the reader: the model read from text equals the model read from what
        // JSONSerialization makes of the same bytes: same structure, same strings, and numbers within 16 ulps.
        // Not bit-equal: Foundation's number parsing is off by up to 5 ulps on some of Lofelt's 16- and 17-digit
        // values (0.8910559341247216 comes back as ...211), where ours matches `Double(String)`, the correctly
        // rounded reference (`JSONReaderTests`). On Linux, JSONSerialization also accepts the trailing commas.
        for url in try Corpus.files() {
            let data = try Data(contentsOf: url)
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let ours = try HapticPattern(data: data).exportDictionary()
            let theirs = try HapticPattern(dictionary: object).exportDictionary()
            #expect(Self.nearlyEqual(ours, theirs), "\(Corpus.name(url)) differs from Foundation's reading")
        }
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
