import Testing
@testable import AHAP

/// One broken document and the first error it must produce.
struct BrokenInput: CustomTestStringConvertible, Sendable {
    let name: String
    let json: String
    let path: String
    let code: AHAPDiagnostic.Code
    let coreHaptics: CoreHapticsErrorCode?

    var testDescription: String { name }
}

/// Wraps an event body in a minimal valid document so each case breaks exactly one thing.
private func event(_ body: String) -> String {
    #"{"Version":1.0,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}},{"Event":\#(body)}]}"#
}

private func entry(_ body: String) -> String {
    #"{"Version":1.0,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}},\#(body)]}"#
}

private let brokenInputs: [BrokenInput] = [
    .init(name: "not JSON", json: "Version: 1", path: "", code: .notJSON, coreHaptics: nil),
    .init(
        name: "truncated", json: #"{"Version":1.0,"Pattern":[{"Event":{"Time":0"#, path: "Pattern[0].Event",
        code: .notJSON, coreHaptics: nil),
    .init(name: "top level array", json: "[]", path: "", code: .wrongType, coreHaptics: .invalidPatternDictionary),
    .init(
        name: "version zero", json: #"{"Version":0,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#,
        path: "Version", code: .badVersion, coreHaptics: .notSupported),
    .init(
        name: "version 2", json: #"{"Version":2,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#,
        path: "Version", code: .badVersion, coreHaptics: .notSupported),
    .init(
        name: "version 0.9", json: #"{"Version":0.9,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#,
        path: "Version", code: .badVersion, coreHaptics: .notSupported),
    .init(
        name: "no pattern", json: #"{"Version":1.0}"#, path: "", code: .emptyPattern,
        coreHaptics: .invalidPatternDictionary),
    .init(
        name: "empty pattern", json: #"{"Version":1.0,"Pattern":[]}"#, path: "Pattern", code: .emptyPattern,
        coreHaptics: .invalidPatternDictionary),
    .init(
        name: "pattern of unknown entries", json: #"{"Version":1.0,"Pattern":[{"ParameterCurves":{}},{}]}"#,
        path: "Pattern", code: .emptyPattern, coreHaptics: .invalidPatternDictionary),
    .init(
        name: "pattern object", json: #"{"Version":1.0,"Pattern":{}}"#, path: "Pattern", code: .wrongType,
        coreHaptics: .invalidPatternDictionary),
    .init(
        name: "entry not object", json: entry("3"), path: "Pattern[1]", code: .wrongType,
        coreHaptics: .invalidPatternDictionary),
    .init(
        name: "event missing time", json: event(#"{"EventType":"HapticTransient"}"#), path: "Pattern[1].Event",
        code: .missingKey, coreHaptics: .invalidEventTime),
    .init(
        name: "event negative time", json: event(#"{"Time":-0.5,"EventType":"HapticTransient"}"#),
        path: "Pattern[1].Event.Time", code: .negativeTime, coreHaptics: .invalidEventTime),
    .init(
        name: "event time text that is no number", json: event(#"{"Time":"now","EventType":"HapticTransient"}"#),
        path: "Pattern[1].Event.Time", code: .wrongType, coreHaptics: .invalidEventTime),
    .init(
        name: "event negative EventTime alias", json: event(#"{"EventTime":-1,"EventType":"HapticTransient"}"#),
        path: "Pattern[1].Event.EventTime", code: .negativeTime, coreHaptics: .invalidEventTime),
    .init(
        name: "event missing type", json: event(#"{"Time":0}"#), path: "Pattern[1].Event", code: .missingKey,
        coreHaptics: .badEventEntry),
    .init(
        name: "event unknown type", json: event(#"{"Time":0,"EventType":"HapticBuzz"}"#),
        path: "Pattern[1].Event.EventType", code: .unknownEventType, coreHaptics: .invalidEventType),
    .init(
        name: "event type number", json: event(#"{"Time":0,"EventType":1}"#), path: "Pattern[1].Event.EventType",
        code: .wrongType, coreHaptics: .badEventEntry),
    .init(
        name: "negative duration", json: event(#"{"Time":0,"EventType":"HapticContinuous","EventDuration":-2}"#),
        path: "Pattern[1].Event.EventDuration", code: .negativeDuration, coreHaptics: .invalidEventDuration),
    .init(
        name: "audio without path", json: event(#"{"Time":0,"EventType":"AudioCustom"}"#), path: "Pattern[1].Event",
        code: .missingWaveformPath, coreHaptics: .badEventEntry),
    .init(
        name: "audio resource ID not whole",
        json: event(#"{"Time":0,"EventType":"AudioCustom","EventWaveformPath":1.5}"#),
        path: "Pattern[1].Event.EventWaveformPath", code: .wrongType, coreHaptics: .badEventEntry),
    .init(
        name: "audio resource ID negative",
        json: event(#"{"Time":0,"EventType":"AudioCustom","EventWaveformPath":-1}"#),
        path: "Pattern[1].Event.EventWaveformPath", code: .wrongType, coreHaptics: .badEventEntry),
    .init(
        name: "audio resource ID past the largest",
        json: event(#"{"Time":0,"EventType":"AudioCustom","EventWaveformPath":9007199254740994}"#),
        path: "Pattern[1].Event.EventWaveformPath", code: .wrongType, coreHaptics: .badEventEntry),
    .init(
        name: "parameters not array", json: event(#"{"Time":0,"EventType":"HapticTransient","EventParameters":{}}"#),
        path: "Pattern[1].Event.EventParameters", code: .wrongType, coreHaptics: .badParameterEntry),
    .init(
        name: "parameter missing id",
        json: event(
            #"{"Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterValue":0.5}]}"#
        ), path: "Pattern[1].Event.EventParameters[1]", code: .missingKey, coreHaptics: .badParameterEntry),
    .init(
        name: "parameter missing value",
        json: event(#"{"Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticSharpness"}]}"#),
        path: "Pattern[1].Event.EventParameters[0]", code: .missingKey, coreHaptics: .badParameterEntry),
    .init(
        name: "parameter value string",
        json: event(
            #"{"Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterID":"HapticSharpness","ParameterValue":"high"}]}"#
        ), path: "Pattern[1].Event.EventParameters[1].ParameterValue", code: .wrongType, coreHaptics: .badParameterEntry
    ),
    .init(
        name: "dynamic parameter missing time",
        json: entry(#"{"Parameter":{"ParameterID":"HapticIntensityControl","ParameterValue":0.5}}"#),
        path: "Pattern[1].Parameter", code: .missingKey, coreHaptics: .badParameterEntry),
    .init(
        name: "dynamic parameter negative time",
        json: entry(#"{"Parameter":{"ParameterID":"HapticIntensityControl","ParameterValue":0.5,"Time":-2}}"#),
        path: "Pattern[1].Parameter.Time", code: .negativeTime, coreHaptics: .invalidEventTime),
    .init(
        name: "dynamic parameter missing id", json: entry(#"{"Parameter":{"ParameterValue":0.5,"Time":0}}"#),
        path: "Pattern[1].Parameter", code: .missingKey, coreHaptics: .badParameterEntry),
    .init(
        name: "curve without points",
        json: entry(#"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0}}"#),
        path: "Pattern[1].ParameterCurve", code: .missingKey, coreHaptics: .badParameterEntry),
    .init(
        name: "curve with empty points",
        json: entry(
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[]}}"#),
        path: "Pattern[1].ParameterCurve.ParameterCurveControlPoints", code: .emptyCurve,
        coreHaptics: .badParameterEntry),
    .init(
        name: "control point missing value",
        json: entry(
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1},{"Time":0.1}]}}"#
        ), path: "Pattern[1].ParameterCurve.ParameterCurveControlPoints[1]", code: .missingKey,
        coreHaptics: .badParameterEntry),
    .init(
        name: "control point negative time",
        json: entry(
            #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[{"Time":-0.1,"ParameterValue":1}]}}"#
        ), path: "Pattern[1].ParameterCurve.ParameterCurveControlPoints[0].Time", code: .negativeTime,
        coreHaptics: .invalidEventTime),
    .init(
        name: "NaN", json: event(#"{"Time":NaN,"EventType":"HapticTransient"}"#), path: "Pattern[1].Event.Time",
        code: .nonFiniteNumber, coreHaptics: nil),
    .init(
        name: "negative Infinity", json: event(#"{"Time":-Infinity,"EventType":"HapticTransient"}"#),
        path: "Pattern[1].Event.Time", code: .nonFiniteNumber, coreHaptics: nil),
    .init(
        name: "negative NaN", json: event(#"{"Time":-NaN,"EventType":"HapticTransient"}"#),
        path: "Pattern[1].Event.Time", code: .nonFiniteNumber, coreHaptics: nil),
    .init(
        name: "huge number", json: event(#"{"Time":1e400,"EventType":"HapticTransient"}"#),
        path: "Pattern[1].Event.Time", code: .nonFiniteNumber, coreHaptics: nil),
    .init(
        name: "waveform flag string",
        json: event(
            #"{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"a.wav","EventWaveformLoopEnabled":"yes"}"#),
        path: "Pattern[1].Event.EventWaveformLoopEnabled", code: .wrongType, coreHaptics: .badEventEntry),
]

@Suite struct BrokenInputTests {
    @Test(arguments: brokenInputs)
    func brokenInputFailsWithPathAndCode(_ input: BrokenInput) {
        let report = AHAPValidator.validate(data: input.json.utf8Data)
        #expect(!report.loads)
        let first = report.errors.first
        #expect(first?.path == input.path, "\(report.diagnostics)")
        #expect(first?.code == input.code)
        #expect(first?.coreHapticsCode == input.coreHaptics)
        #expect(first?.message.isEmpty == false)
        #expect(throws: AHAPError.self) { try HapticPattern(data: input.json.utf8Data) }
    }

    @Test func syntaxErrorsCarryLineAndColumn() {
        let report = AHAPValidator.validate(data: "{\n  \"Version\": 1.0,\n  \"Pattern\": [ ? ]\n}".utf8Data)
        let error = report.errors.first
        #expect(error?.line == 3)
        #expect(error?.column == 16)
        #expect(error?.path == "Pattern[0]")
    }

    @Test func warningsDoNotStopLoading() {
        let json = #"""
            {"Pattern":[
              {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":45,"Colour":"red",
                "EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1.5},
                                   {"ParameterID":"HapticWobble","ParameterValue":0.5},
                                   {"ParameterID":"HapticIntensity","ParameterValue":0.5}]}},
              {"ParameterCurve":{"ParameterID":"HapticSharpnessControl","Time":0,"ParameterCurveControlPoints":[
                {"Time":0.2,"ParameterValue":0},{"Time":0.1,"ParameterValue":0},{"Time":0.3,"ParameterValue":0},
                {"Time":0.4,"ParameterValue":0},{"Time":0.5,"ParameterValue":0},{"Time":0.6,"ParameterValue":0},
                {"Time":0.7,"ParameterValue":0},{"Time":0.8,"ParameterValue":0},{"Time":0.9,"ParameterValue":0},
                {"Time":1.0,"ParameterValue":0},{"Time":1.1,"ParameterValue":0},{"Time":1.2,"ParameterValue":0},
                {"Time":1.3,"ParameterValue":0},{"Time":1.4,"ParameterValue":0},{"Time":1.5,"ParameterValue":0},
                {"Time":1.6,"ParameterValue":0},{"Time":1.7,"ParameterValue":2}]}}
            ]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.loads)
        let found = Dictionary(grouping: report.diagnostics, by: \.code).mapValues { $0.map(\.path) }
        #expect(found[.missingVersion] == [""])
        #expect(found[.unknownKey] == ["Pattern[0].Event.Colour"])
        #expect(found[.durationTooLong] == ["Pattern[0].Event.EventDuration"])
        #expect(
            found[.valueOutOfRange] == [
                "Pattern[0].Event.EventParameters[0].ParameterValue",
                "Pattern[1].ParameterCurve.ParameterCurveControlPoints[16].ParameterValue",
            ])
        #expect(found[.unknownParameter] == ["Pattern[0].Event.EventParameters[1].ParameterID"])
        #expect(found[.duplicateParameter] == ["Pattern[0].Event.EventParameters[2].ParameterID"])
        #expect(found[.tooManyControlPoints] == ["Pattern[1].ParameterCurve.ParameterCurveControlPoints"])
        #expect(found[.unsortedControlPoints] == ["Pattern[1].ParameterCurve.ParameterCurveControlPoints[1].Time"])
        #expect(report.errors.isEmpty)
        #expect(report.pattern?.events.first?.intensity == 0.5)
        #expect(
            report.pattern?.events.first?.parameters.contains { $0.parameterID == .unknown("HapticWobble") } == true)
    }

    @Test func versionIsReadAsCoreHapticsReadsIt() {
        func report(_ version: String) -> AHAPReport {
            AHAPValidator.validate(
                data: #"{"Version":\#(version),"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
                    .utf8Data)
        }
        for supported in ["1", "1.0", "1.05", "1.1"] {
            #expect(report(supported).diagnostics.isEmpty, "Version \(supported)")
            #expect(report(supported).pattern?.version == Double(supported))
        }
        for malformed in [#""1.0""#, #""2""#, "[]", "{}"] {
            let read = report(malformed)
            #expect(read.loads, "Version \(malformed)")
            #expect(read.diagnostics.map(\.code) == [.missingVersion], "Version \(malformed)")
            #expect(read.pattern?.version == nil)
        }
        for refused in ["0", "-1", "0.99", "1.11", "2", "1e9"] {
            #expect(report(refused).errors.map(\.code) == [.badVersion], "Version \(refused)")
            #expect(report(refused).errors.first?.coreHapticsCode == .notSupported)
        }
    }

    /// A boolean `Version` is the number 1 or 0, as a boolean is wherever a number belongs, since Core Haptics
    /// reads it as a number: `true` is 1.0, `false` is refused (until 7 December both were read as a malformed
    /// Version, 1.0, and `false` loaded).
    @Test func aBooleanVersionIsTheNumberOneOrZero() {
        func report(_ version: String) -> AHAPReport {
            AHAPValidator.validate(
                data: #"{"Version":\#(version),"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#
                    .utf8Data)
        }
        #expect(report("true").pattern?.version == 1)
        #expect(report("true").diagnostics.map(\.code) == [.booleanAsNumber])
        #expect(report("false").errors.map(\.code) == [.badVersion])
        #expect(report("false").errors.first?.coreHapticsCode == .notSupported)
    }

    @Test func eventTypeAndDocumentLevelWarnings() {
        let json = #"""
            /* exported by hand */
            {"Version":"2","Metadata":{"Project":"p","Revision":3},
             "Pattern":[
              {"Event":{"Time":0,"EventType":"HapticTransient","EventDuration":1,"EventWaveformPath":"x.wav",
                        "EventParameters":[{"ParameterID":"AudioVolume","ParameterValue":0.5}]}},
              {"Event":{"Time":0,"Time":0.5,"EventType":"HapticContinuous"}},
              {"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"a.wav","EventWaveformLoopEnabled":1,
                        "EventParameters":[{"ParameterID":"HapticSharpness","ParameterValue":0.5}]}}
            ]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.loads)
        let found = Dictionary(grouping: report.diagnostics, by: \.code).mapValues { $0.map(\.path) }
        #expect(found[.lenientSyntax] == [""])
        #expect(found[.missingVersion] == ["Version"])
        #expect(found[.metadataNotText] == ["Metadata.Revision"])
        #expect(
            report.diagnostics.first { $0.code == .metadataNotText }?.message
                == "Metadata values are text; a number is kept as its JSON text")
        #expect(report.pattern?.metadata?.entries["Revision"] == "3")
        // A transient's EventDuration is its logical length, which pads the pattern: not a key without effect.
        #expect(
            found[.ignoredForEventType] == [
                "Pattern[0].Event.EventWaveformPath", "Pattern[0].Event.EventParameters[0]",
                "Pattern[2].Event.EventParameters[0]",
            ])
        #expect(report.pattern?.duration == 1)
        #expect(found[.duplicateKey] == ["Pattern[1].Event.Time"])
        #expect(found[.missingDuration] == ["Pattern[1].Event"])
        let pattern = report.pattern
        #expect(pattern?.metadata?.entries["Revision"] == "3")
        #expect(pattern?.events[1].relativeTime == 0.5)
        #expect(pattern?.events[2].waveformLoopEnabled == true)
    }

    @Test func timeAliasesAreReadWhereCoreHapticsReadsThemAndNowhereElse() throws {
        let json = #"""
            {"Version":1,"Pattern":[{"Event":{"EventTime":0.25,"EventType":"HapticTransient"}},
             {"Parameter":{"ParameterID":"HapticIntensityControl","ParameterValue":0.5,"ParameterTime":0.5}},
             {"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":1,
               "ParameterCurveControlPoints":[{"Time":0,"ParameterValue":0.5}]}}]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        #expect(report.diagnostics.isEmpty, "\(report.diagnostics)")
        let pattern = try #require(report.pattern)
        #expect(pattern.events.first?.relativeTime == 0.25)
        #expect(pattern.dynamicParameters.first?.relativeTime == 0.5)
        #expect(pattern.parameterCurves.first?.relativeTime == 1)

        let misplaced: [(entry: String, alias: String, owner: String)] = [
            (
                #"{"Event":{"ParameterTime":0,"EventType":"HapticTransient"}}"#, "Pattern[0].Event.ParameterTime",
                "Pattern[0].Event"
            ),
            (
                #"{"Parameter":{"ParameterID":"HapticIntensityControl","ParameterValue":1,"EventTime":0}}"#,
                "Pattern[0].Parameter.EventTime", "Pattern[0].Parameter"
            ),
            (
                #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","ParameterTime":0,"ParameterCurveControlPoints":[{"Time":0,"ParameterValue":1}]}}"#,
                "Pattern[0].ParameterCurve.ParameterTime", "Pattern[0].ParameterCurve"
            ),
            (
                #"{"ParameterCurve":{"ParameterID":"HapticIntensityControl","Time":0,"ParameterCurveControlPoints":[{"ParameterTime":0,"ParameterValue":1}]}}"#,
                "Pattern[0].ParameterCurve.ParameterCurveControlPoints[0].ParameterTime",
                "Pattern[0].ParameterCurve.ParameterCurveControlPoints[0]"
            ),
        ]
        for (entry, alias, owner) in misplaced {
            let report = AHAPValidator.validate(data: #"{"Version":1,"Pattern":[\#(entry)]}"#.utf8Data)
            #expect(!report.loads, "\(entry)")
            #expect(report.warnings.map(\.path) == [alias], "\(entry)")
            #expect(report.warnings.map(\.code) == [.unknownKey], "\(entry)")
            #expect(report.errors.first?.path == owner, "\(entry)")
            #expect(report.errors.first?.code == .missingKey, "\(entry)")
        }
    }

    /// `Sustained` is documented as a boolean, and Core Haptics' reader takes `true`/`false` where a number belongs
    /// as 1/0; `EventDuration` -1 is its mark for no duration. Both load, each with a warning (until 6 December
    /// both were errors).
    @Test func aBooleanValueAndADurationOfMinusOneLoadAsCoreHapticsReadsThem() throws {
        let json = #"""
            {"Version":1,"Pattern":[
              {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.5,
                "EventParameters":[{"ParameterID":"Sustained","ParameterValue":false},
                                   {"ParameterID":"HapticIntensity","ParameterValue":true}]}},
              {"Event":{"Time":1,"EventType":"HapticTransient","EventDuration":-1}}]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        let pattern = try #require(report.pattern, "\(report.diagnostics)")
        #expect(report.errors.isEmpty)
        #expect(
            report.warnings.filter { $0.code == .booleanAsNumber }.map(\.path) == [
                "Pattern[0].Event.EventParameters[0].ParameterValue",
                "Pattern[0].Event.EventParameters[1].ParameterValue",
            ])
        #expect(report.warnings.filter { $0.code == .noDurationMark }.map(\.path) == ["Pattern[1].Event.EventDuration"])
        #expect(pattern.events[0].parameters.map(\.value) == [0, 1])
        #expect(pattern.events[1].duration == nil)
        // Any other negative duration is still an error.
        let negative = AHAPValidator.validate(
            data: #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":-0.5}}]}"#
                .utf8Data)
        #expect(negative.errors.map(\.code) == [.negativeDuration])
    }

    /// The 30 s cap is Core Haptics' for haptic continuous events only; a sound's is this package's own, and the
    /// warning says so (until 6 December an `AudioContinuous` event's credited Core Haptics).
    @Test func theDurationWarningCreditsCoreHapticsOnlyForHapticEvents() {
        for (type, owner) in [("HapticContinuous", "Core Haptics plays"), ("AudioContinuous", "this package plays")] {
            let report = AHAPValidator.validate(
                data: #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"\#(type)","EventDuration":40}}]}"#
                    .utf8Data)
            #expect(report.warnings.map(\.code) == [.durationTooLong], "\(type)")
            #expect(report.warnings.first?.message.contains(owner) == true, "\(type): \(report.warnings)")
        }
    }

    @Test func numbersWrittenAsTextAndAParameterWithoutValueLoadAsCoreHapticsReadsThem() throws {
        let json = #"""
            {"Version":1,"Pattern":[
              {"Event":{"Time":"0.25","EventType":"HapticContinuous","EventDuration":"1e-1",
                "EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":"-0.5"}]}},
              {"Parameter":{"ParameterID":"HapticIntensityControl","Time":0.5}},
              {"ParameterCurve":{"ParameterID":"HapticSharpnessControl","Time":"1",
                "ParameterCurveControlPoints":[{"Time":"0","ParameterValue":"0.5"}]}}]}
            """#
        let report = AHAPValidator.validate(data: json.utf8Data)
        let pattern = try #require(report.pattern, "\(report.diagnostics)")
        #expect(report.errors.isEmpty)
        #expect(
            Set(report.warnings.filter { $0.code == .numberAsText }.map(\.path)) == [
                "Pattern[0].Event.Time", "Pattern[0].Event.EventDuration",
                "Pattern[0].Event.EventParameters[0].ParameterValue", "Pattern[2].ParameterCurve.Time",
                "Pattern[2].ParameterCurve.ParameterCurveControlPoints[0].Time",
                "Pattern[2].ParameterCurve.ParameterCurveControlPoints[0].ParameterValue",
            ])
        #expect(report.warnings.filter { $0.code == .missingValue }.map(\.path) == ["Pattern[1].Parameter"])
        #expect(pattern.events.first?.relativeTime == 0.25)
        #expect(pattern.events.first?.duration == 0.1)
        #expect(pattern.events.first?.parameters.first?.value == -0.5)
        #expect(pattern.dynamicParameters.first?.value == 0)
        #expect(pattern.parameterCurves.first?.controlPoints.first?.value == 0.5)
        for text in [#""soon""#, #""0x10""#, #""nan""#, #""""#, #"" 1""#] {
            let report = AHAPValidator.validate(
                data: #"{"Version":1,"Pattern":[{"Event":{"Time":\#(text),"EventType":"HapticTransient"}}]}"#.utf8Data)
            #expect(report.errors.map(\.code) == [.wrongType], "Time \(text)")
        }
        let eventParameterWithoutValue = AHAPValidator.validate(
            data: #"""
                {"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient",
                  "EventParameters":[{"ParameterID":"HapticIntensity"}]}}]}
                """#.utf8Data)
        #expect(eventParameterWithoutValue.errors.map(\.code) == [.missingKey], "Core Haptics refuses it too (-4831)")
    }

    /// A number written as text beyond a `Double` is the error such a number is, where it is, not "must be a
    /// number, found a string" (until 7 December it was that wrong-type error).
    @Test func aNumberWrittenAsTextBeyondADoubleIsANonFiniteNumber() {
        for text in [#""1e400""#, #""-1e400""#] {
            let report = AHAPValidator.validate(
                data:
                    #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":\#(text)}}]}"#
                    .utf8Data)
            #expect(report.errors.map(\.code) == [.nonFiniteNumber], "EventDuration \(text): \(report.errors)")
            #expect(report.errors.map(\.path) == ["Pattern[0].Event.EventDuration"])
            #expect(
                report.errors.first?.message
                    == "EventDuration is the text \(text), a number too large for a Double")
        }
    }

    @Test func allErrorsOfADocumentAreReported() {
        let json =
            #"{"Version":1,"Pattern":[{"Event":{"Time":-1,"EventType":"X"}},{"Event":{"EventType":"HapticTransient"}}]}"#
        let codes = AHAPValidator.validate(data: json.utf8Data).errors.map(\.code)
        #expect(codes == [.unknownEventType, .negativeTime, .missingKey])
    }
}
