import Foundation
import Testing
@testable import AHAP

/// What real files and hostile ones hold besides broken syntax: `null` for optional keys (Apple's samples write
/// `"EventWaveformPath": null`), times past `HapticPattern.maximumTime`, and paths that are not AHAP files.
@Suite struct RealWorldInputTests {
    private static func document(event: String, extra: String = "") -> String {
        #"{"Version":1.0,"Pattern":[{"Event":{\#(event)}}\#(extra)]}"#
    }

    private static let transient = #""Time":0,"EventType":"HapticTransient""#

    /// Every optional key written as `null`: the document loads, the key reads as absent, and one `null-value`
    /// warning names its path.
    @Test(arguments: [
        ("EventWaveformPath", "Pattern[0].Event.EventWaveformPath"),
        ("EventDuration", "Pattern[0].Event.EventDuration"),
        ("EventParameters", "Pattern[0].Event.EventParameters"),
        ("EventWaveformUseVolumeEnvelope", "Pattern[0].Event.EventWaveformUseVolumeEnvelope"),
        ("EventWaveformLoopEnabled", "Pattern[0].Event.EventWaveformLoopEnabled"),
        ("Colour", "Pattern[0].Event.Colour"),
    ])
    func nullEventKeysReadAsAbsent(key: String, path: String) throws {
        let report = AHAPValidator.validate(data: Self.document(event: "\(Self.transient),\"\(key)\":null").utf8Data)
        let event = try #require(report.pattern?.events.first)
        #expect(report.diagnostics.map(\.code) == [.nullValue])
        #expect(report.diagnostics.first?.path == path)
        #expect(report.diagnostics.first?.severity == .warning)
        #expect(event.waveformPath == nil && event.duration == nil && event.parameters.isEmpty)
        #expect(event.waveformUsesVolumeEnvelope == nil && event.waveformLoopEnabled == nil)
    }

    /// `null` in a dictionary (Foundation's `NSNull`, as `JSONSerialization` reads it) is `null` in text too: the
    /// same warning and the same pattern.
    @Test func nullInADictionaryReadsAsInText() throws {
        let text = Self.document(event: "\(Self.transient),\"EventWaveformPath\":null").utf8Data
        let object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        let fromDictionary = AHAPValidator.validate(dictionary: object)
        #expect(fromDictionary.diagnostics.map(\.code) == [.nullValue])
        #expect(fromDictionary.diagnostics.first?.path == "Pattern[0].Event.EventWaveformPath")
        #expect(fromDictionary.pattern == AHAPValidator.validate(data: text).pattern)
    }

    /// A `null` `Time` or time alias reads as absent before `Time` and its alias are weighed against each other, so
    /// the other spelling gives the time, with the `null-value` warning at the null key; the dictionary
    /// `JSONSerialization` makes of the same text reads the same.
    @Test(arguments: [
        (#"{"Event":{"Time":0.5,"EventTime":null,"EventType":"HapticTransient"}}"#, "Pattern[1].Event.EventTime"),
        (#"{"Event":{"EventTime":0.5,"Time":null,"EventType":"HapticTransient"}}"#, "Pattern[1].Event.Time"),
        (
            #"{"Parameter":{"ParameterID":"HapticIntensityControl","Time":0.5,"ParameterTime":null,"ParameterValue":0.5}}"#,
            "Pattern[1].Parameter.ParameterTime"
        ),
        (
            #"{"Parameter":{"ParameterID":"HapticIntensityControl","ParameterTime":0.5,"Time":null,"ParameterValue":0.5}}"#,
            "Pattern[1].Parameter.Time"
        ),
    ])
    func aNullTimeOrTimeAliasReadsAsAbsentAndTheOtherSpellingGivesTheTime(entry: String, nullPath: String) throws {
        let text = Self.document(event: Self.transient, extra: "," + entry).utf8Data
        let object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        for report in [AHAPValidator.validate(data: text), AHAPValidator.validate(dictionary: object)] {
            let pattern = try #require(report.pattern, "\(report.diagnostics)")
            #expect(report.diagnostics.map(\.code) == [.nullValue])
            #expect(report.diagnostics.first?.path == nullPath)
            #expect(
                (pattern.events.count == 2
                    ? pattern.events[1].relativeTime : pattern.dynamicParameters.first?.relativeTime) == 0.5)
        }
    }

    /// `Time` and its alias both given: `Time` is used whichever is written first, since a dictionary has no key
    /// order and must read as its text does; a `duplicate-key` warning at the alias says which one is used.
    @Test(arguments: [
        #"{"Event":{"Time":2,"EventTime":1,"EventType":"HapticTransient"}}"#,
        #"{"Event":{"EventTime":1,"Time":2,"EventType":"HapticTransient"}}"#,
        #"{"Parameter":{"ParameterID":"HapticIntensityControl","Time":2,"ParameterTime":1,"ParameterValue":0.5}}"#,
        #"{"Parameter":{"ParameterID":"HapticIntensityControl","ParameterTime":1,"Time":2,"ParameterValue":0.5}}"#,
    ])
    func timeIsUsedOverItsAliasInEitherOrderAsInADictionary(entry: String) throws {
        let text = Self.document(event: Self.transient, extra: "," + entry).utf8Data
        let object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        let alias = entry.hasPrefix(#"{"Event""#) ? "Pattern[1].Event.EventTime" : "Pattern[1].Parameter.ParameterTime"
        for report in [AHAPValidator.validate(data: text), AHAPValidator.validate(dictionary: object)] {
            let pattern = try #require(report.pattern, "\(report.diagnostics)")
            #expect(report.diagnostics.map(\.code) == [.duplicateKey])
            #expect(report.diagnostics.first?.path == alias)
            #expect(report.diagnostics.first?.message.hasSuffix(#"; "Time" is used"#) == true, "\(report.diagnostics)")
            #expect(
                (pattern.events.count == 2
                    ? pattern.events[1].relativeTime : pattern.dynamicParameters.first?.relativeTime) == 2)
        }
    }

    /// The same key twice is a different matter: the one written last is used, `null` included, as
    /// `JSONSerialization` keeps the last one in the dictionary it makes, so the two readings still agree.
    @Test func theSameKeyTwiceReadsAsTheLastOneNullIncludedAsJSONSerializationReadsIt() throws {
        let text = Self.document(
            event: #""Time":0,"EventType":"AudioCustom","EventWaveformPath":"a.wav","EventWaveformPath":null"#
        ).utf8Data
        let object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        let fromText = AHAPValidator.validate(data: text)
        #expect(fromText.errors.map(\.code) == [.missingWaveformPath])
        #expect(fromText.warnings.map(\.code) == [.duplicateKey, .nullValue])
        #expect(AHAPValidator.validate(dictionary: object).errors.map(\.code) == [.missingWaveformPath])
    }

    /// `true` and `false` in the dictionary `JSONSerialization` makes (Foundation's boolean `NSNumber`) are
    /// booleans, as in text: not a resource ID where `EventWaveformPath` wants a path or a number, read as 1 or 0
    /// with the `boolean-as-number` warning where a number belongs, and as themselves where a flag belongs.
    @Test(arguments: [
        #""Time":0,"EventType":"AudioCustom","EventWaveformPath":true"#,
        #""Time":0,"EventType":"AudioCustom","EventWaveformPath":false"#,
        #""Time":true,"EventType":"HapticContinuous","EventDuration":true,"EventParameters":[{"ParameterID":"Sustained","ParameterValue":false}]"#,
        #""Time":0,"EventType":"AudioCustom","EventWaveformPath":"a.wav","EventWaveformLoopEnabled":true,"EventWaveformUseVolumeEnvelope":false"#,
    ])
    func aBooleanInADictionaryFromJSONSerializationReadsAsInText(event: String) throws {
        let text = Self.document(event: event).utf8Data
        let object = try #require(try JSONSerialization.jsonObject(with: text) as? [String: Any])
        let fromText = AHAPValidator.validate(data: text)
        let fromDictionary = AHAPValidator.validate(dictionary: object)
        #expect(fromDictionary.pattern == fromText.pattern)
        #expect(fromDictionary.diagnostics.map(\.code) == fromText.diagnostics.map(\.code))
        #expect(fromDictionary.diagnostics.map(\.path) == fromText.diagnostics.map(\.path))
    }

    @Test func nullDocumentKeysReadAsAbsent() throws {
        let json = #"""
            {"Version":null,"Metadata":{"Project":null,"Created":"today"},"Pattern":[
              {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.5,
                        "EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":0.5}]}},
              {"Parameter":{"ParameterID":"HapticIntensityControl","Time":0.1,"ParameterValue":0.5,"Extra":null}},
              {"ParameterCurve":{"ParameterID":"HapticSharpnessControl","Time":0,"Extra":null,
                "ParameterCurveControlPoints":[{"Time":0,"ParameterValue":0,"Extra":null}]}},
              {"Event":null}
            ]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        let pattern = try #require(report.pattern)
        let nulls = report.diagnostics.filter { $0.code == .nullValue }.map(\.path)
        #expect(
            nulls == [
                "Version", "Metadata.Project", "Pattern[1].Parameter.Extra", "Pattern[2].ParameterCurve.Extra",
                "Pattern[2].ParameterCurve.ParameterCurveControlPoints[0].Extra", "Pattern[3].Event",
            ])
        #expect(report.errors.isEmpty)
        #expect(report.diagnostics.contains { $0.code == .missingVersion })
        #expect(report.diagnostics.contains { $0.code == .emptyEntry && $0.path == "Pattern[3]" })
        #expect(pattern.version == nil)
        #expect(pattern.metadata?.entries == ["Created": "today"])
        #expect(pattern.events.count == 1 && pattern.dynamicParameters.count == 1 && pattern.parameterCurves.count == 1)
    }

    /// A required key written as `null` is missing: the warning, then the error the absent key gives.
    @Test(arguments: [
        (#""Time":null,"EventType":"HapticTransient""#, AHAPDiagnostic.Code.missingKey),
        (#""Time":0,"EventType":null"#, .missingKey),
        (#""Time":0,"EventType":"AudioCustom","EventWaveformPath":null"#, .missingWaveformPath),
        (
            #""Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":null,"ParameterValue":1}]"#,
            .missingKey
        ),
    ])
    func nullRequiredKeysAreMissing(event: String, code: AHAPDiagnostic.Code) {
        let report = AHAPValidator.validate(data: Self.document(event: event).utf8Data)
        #expect(!report.loads)
        #expect(report.errors.map(\.code) == [code])
        #expect(report.warnings.map(\.code) == [.nullValue])
    }

    @Test func nullPatternIsNoPattern() {
        let report = AHAPValidator.validate(data: #"{"Version":1,"Pattern":null}"#.utf8Data)
        #expect(report.errors.map(\.code) == [.emptyPattern])
        #expect(report.warnings.map(\.code) == [.nullValue])
    }

    // MARK: Times

    /// Times past the bound, wherever they are, are one `time-too-large` error at their path; the bound itself
    /// loads.
    @Test(arguments: [
        (#"{"Event":{"Time":1e308,"EventType":"HapticTransient"}}"#, "Pattern[1].Event.Time"),
        (#"{"Event":{"EventTime":3600.001,"EventType":"HapticTransient"}}"#, "Pattern[1].Event.EventTime"),
        (
            #"{"Parameter":{"ParameterID":"HapticIntensityControl","Time":1e300,"ParameterValue":1}}"#,
            "Pattern[1].Parameter.Time"
        ),
        (
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":1e308,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1}]}}"#,
            "Pattern[1].ParameterCurve.Time"
        ),
        (
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1},{"Time":1e308,"ParameterValue":0}]}}"#,
            "Pattern[1].ParameterCurve.ParameterCurveControlPoints[1].Time"
        ),
        (
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":3000,"ParameterCurveControlPoints":[{"Time":700,"ParameterValue":1}]}}"#,
            "Pattern[1].ParameterCurve.ParameterCurveControlPoints[0].Time"
        ),
    ])
    func timesPastTheBoundAreRefused(entry: String, path: String) {
        let report = AHAPValidator.validate(data: Self.document(event: Self.transient, extra: "," + entry).utf8Data)
        #expect(!report.loads)
        #expect(report.errors.map(\.code) == [.timeTooLarge])
        #expect(report.errors.first?.path == path)
        #expect(report.errors.first?.message.contains("3600") == true)
    }

    @Test func theBoundItselfAndHugeDurationsLoad() throws {
        let json = Self.document(
            event: #""Time":3600,"EventType":"HapticContinuous","EventDuration":1e308"#,
            extra:
                #",{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":1800,"ParameterCurveControlPoints":[{"Time":1800,"ParameterValue":1}]}}"#
        )
        let report = AHAPValidator.validate(data: json.utf8Data)
        let pattern = try #require(report.pattern)
        #expect(report.warnings.map(\.code) == [.durationTooLong])
        #expect(pattern.duration == HapticPattern.maximumTime + HapticEvent.maximumContinuousDuration)
    }

    @Test func negativeAndOverflowingTimesKeepTheirOwnErrors() {
        let negative = AHAPValidator.validate(
            data: Self.document(event: #""Time":-1e308,"EventType":"HapticTransient""#).utf8Data)
        #expect(negative.errors.map(\.code) == [.negativeTime])
        let overflow = AHAPValidator.validate(
            data: Self.document(event: #""Time":1e309,"EventType":"HapticTransient""#).utf8Data)
        #expect(overflow.errors.map(\.code) == [.nonFiniteNumber])
        #expect(overflow.errors.first?.path == "Pattern[0].Event.Time")
    }

    /// A pattern built in code can hold what no file can: its diagnostics (what the engine checks) name it.
    @Test func builtPatternsWithExtremeNumbersAreDiagnosed() {
        let cases: [(HapticEvent, AHAPDiagnostic.Code)] = [
            (HapticEvent(type: .hapticTransient, relativeTime: 1e308), .timeTooLarge),
            (HapticEvent(type: .hapticTransient, relativeTime: .nan), .nonFiniteNumber),
            (HapticEvent(type: .hapticTransient, relativeTime: .infinity), .nonFiniteNumber),
            (HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: .nan), .nonFiniteNumber),
            (
                HapticEvent(
                    type: .hapticTransient,
                    parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: .nan)],
                    relativeTime: 0), .nonFiniteNumber
            ),
        ]
        for (event, code) in cases {
            let errors = HapticPattern(events: [event], parameters: []).validationDiagnostics().filter {
                $0.severity == .error
            }
            #expect(errors.map(\.code) == [code], "\(event)")
        }
        #expect(HapticPattern.isWithinTimeBound(HapticPattern.maximumTime))
        #expect(!HapticPattern.isWithinTimeBound(.nan) && !HapticPattern.isWithinTimeBound(-.infinity))
    }

    @Test func dictionariesMeetTheSameBound() {
        let report = AHAPValidator.validate(dictionary: [
            "Version": 1.0, "Pattern": [["Event": ["Time": 1e308, "EventType": "HapticTransient"]]],
        ])
        #expect(report.errors.map(\.code) == [.timeTooLarge])
    }
}
