import Foundation
import Testing
@testable import AHAP
import AHAPFiles

@Suite struct RoundTripTests {
    @Test func fixturesRoundTripThroughText() throws {
        try Self.expectRoundTripsThroughText(try Fixtures.files(), named: Fixtures.name)
    }

    @Test(.corpus) func corpusRoundTripsThroughText() throws {
        try Self.expectRoundTripsThroughText(try Corpus.files(), named: Corpus.name)
    }

    @Test func encodedFixturesAreStrictJSONWithoutWarningsTheyDidNotHave() throws {
        try Self.expectEncodedStrictJSON(try Fixtures.files())
    }

    @Test(.corpus) func encodedCorpusIsStrictJSONWithoutWarningsItDidNotHave() throws {
        try Self.expectEncodedStrictJSON(try Corpus.files())
    }

    @Test func fixturesRoundTripThroughDictionaries() throws {
        try Self.expectRoundTripsThroughDictionaries(try Fixtures.files(), named: Fixtures.name)
    }

    @Test(.corpus) func corpusRoundTripsThroughDictionaries() throws {
        try Self.expectRoundTripsThroughDictionaries(try Corpus.files(), named: Corpus.name)
    }

    static func expectRoundTripsThroughText(_ files: [URL], named name: (URL) -> String) throws {
        for url in files {
            let pattern = try HapticPattern(contentsOf: url)
            for pretty in [true, false] {
                let encoded = try pattern.ahapData(prettyPrinted: pretty)
                let again = try HapticPattern(data: encoded)
                #expect(again == pattern, "\(name(url)) changed in a round trip (pretty: \(pretty))")
            }
        }
    }

    static func expectEncodedStrictJSON(_ files: [URL]) throws {
        for url in files {
            let encoded = try HapticPattern(contentsOf: url).ahapData()
            // Strict JSON: Foundation without JSON5 reads it.
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: encoded) }
            let report = AHAPValidator.validate(data: encoded)
            #expect(!report.diagnostics.contains { $0.code == .lenientSyntax || $0.code == .unknownKey })
        }
    }

    static func expectRoundTripsThroughDictionaries(_ files: [URL], named name: (URL) -> String) throws {
        for url in files {
            let pattern = try HapticPattern(contentsOf: url)
            let again = try HapticPattern(dictionary: pattern.exportDictionary())
            #expect(again == pattern, "\(name(url)) changed in a dictionary round trip")
        }
    }

    /// What `validationDiagnostics()` says of a pattern built in code is what reading the text it writes says,
    /// the reader's limits on that text too: a string longer than 64 KiB, a document longer than the limit
    /// (until 7 December they were not checked, and a pattern it passed could be written to a file that did not
    /// load). They bound the text, not playing: `boundsDiagnostic()`, the engine's check, lets such a pattern play.
    @Test func validationDiagnosticsReportTheLimitsOfTheWrittenText() throws {
        let long = String(repeating: "x", count: 70_000)
        let tap = HapticEvent(type: .hapticTransient, relativeTime: 0)
        let taps = (0..<50).map { HapticEvent(type: .hapticTransient, relativeTime: Double($0) / 10) }
        var smallDocuments = AHAPLimits.default
        smallDocuments.maximumDocumentBytes = 1_000
        let cases: [(String, HapticPattern, AHAPLimits)] = [
            (
                "a 70,000-byte Metadata value",
                HapticPattern(events: [tap], parameters: [], metadata: PatternMetadata(description: long)), .default
            ),
            (
                "a 70,000-byte parameter name",
                HapticPattern(
                    events: [
                        HapticEvent(
                            type: .hapticTransient,
                            parameters: [HapticEventParameter(parameterID: .unknown(long), value: 1)], relativeTime: 0)
                    ], parameters: []), .default
            ),
            (
                "50 taps in a document of at most 1,000 bytes", HapticPattern(events: taps, parameters: []),
                smallDocuments
            ),
        ]
        for (label, pattern, limits) in cases {
            let read = AHAPValidator.validate(data: try pattern.ahapData(), limits: limits)
            #expect(read.errors.map(\.code) == [.limitExceeded], "\(label): \(read.errors)")
            #expect(pattern.validationDiagnostics(limits: limits) == read.diagnostics, "\(label)")
            #expect(pattern.boundsDiagnostic(limits: limits) == nil, "\(label)")
        }
    }

    @Test func generatedPatternsRoundTrip() throws {
        var random = SeededGenerator(seed: 0xA4A9)
        for _ in 0..<300 {
            let pattern = Self.randomPattern(using: &random)
            #expect(pattern.validationDiagnostics().allSatisfy { $0.severity == .warning })
            let again = try HapticPattern(data: pattern.ahapData(prettyPrinted: Bool.random(using: &random)))
            #expect(again == pattern)
        }
    }

    /// An `AudioCustom` event made with a registered resource is written as Core Haptics writes one in a pattern
    /// dictionary, its ID a number in `EventWaveformPath`, and reads back the same through text and dictionaries.
    @Test func anEventPlayingARegisteredResourceWritesItsIDAsANumberAndReadsBackTheSame() throws {
        let pattern = HapticPattern(
            events: [
                HapticEvent(
                    audioResourceID: AudioResourceID(rawValue: 7),
                    parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0.5)], relativeTime: 0.25,
                    duration: 0.5, loopEnabled: true),
                HapticEvent(
                    audioResourceID: AudioResourceID(rawValue: AudioResourceID.maximumRawValue), relativeTime: 1),
            ], parameters: [])
        let dictionary = pattern.exportDictionary()
        let entries = try #require(dictionary["Pattern"] as? [[String: Any]])
        let written = try #require(entries.first?["Event"] as? [String: Any])
        #expect(written["EventWaveformPath"] as? Double == 7)
        #expect(try HapticPattern(dictionary: dictionary) == pattern)
        #expect(try HapticPattern(data: pattern.ahapData()) == pattern)
        #expect(pattern.validationDiagnostics().isEmpty)
        #expect(
            pattern.events.map(\.audioWaveform) == [
                .resource(AudioResourceID(rawValue: 7)), .resource(.init(rawValue: 1 << 53)),
            ])
    }

    /// An `AudioResourceID` past `AudioResourceID.maximumRawValue` (a `UInt` can hold one) is not written as a
    /// number that reads back as another resource: 2^53 + 1 is no `Double`, and its nearest, 2^53, is a resource
    /// too. Its text and its dictionary are refused where it is, and `validationDiagnostics()` names it.
    @Test(arguments: [AudioResourceID.maximumRawValue + 1, AudioResourceID.maximumRawValue + 2, UInt.max])
    func anAudioResourceIDPastTheLargestIsReportedNotReadBackAsAnother(rawValue: UInt) throws {
        let pattern = HapticPattern(
            events: [HapticEvent(audioResourceID: AudioResourceID(rawValue: rawValue), relativeTime: 0, duration: 1)],
            parameters: [])
        let path = "Pattern[0].Event.EventWaveformPath"
        #expect(pattern.validationDiagnostics().filter { $0.severity == .error }.map(\.path) == [path])
        #expect(throws: AHAPError.self) { try HapticPattern(data: pattern.ahapData()) }
        #expect(throws: AHAPError.self) { try HapticPattern(dictionary: pattern.exportDictionary()) }
    }

    @Test func nonFiniteValuesCannotBeEncoded() {
        let pattern = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticTransient, parameters: [.init(parameterID: .hapticIntensity, value: .nan)],
                    relativeTime: 0)
            ],
            parameters: [])
        #expect {
            try pattern.ahapData()
        } throws: { error in
            (error as? AHAPError)?.diagnostics.first?.path == "Pattern[0].Event.EventParameters[0].ParameterValue"
        }
    }

    static func randomValue(using random: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: Double(Int.random(in: 0...10, using: &random)) / 10
        case 1: Double.random(in: -1...1, using: &random)
        case 2: Double.random(in: 0...1e-6, using: &random)
        default: Double.random(in: 0...1, using: &random)
        }
    }

    static func randomTime(using random: inout SeededGenerator) -> Double {
        Bool.random(using: &random)
            ? Double(Int.random(in: 0...100, using: &random)) / 100 : Double.random(in: 0...29, using: &random)
    }

    static func randomPattern(using random: inout SeededGenerator) -> HapticPattern {
        var events: [HapticEvent] = []
        for _ in 0..<Int.random(in: 1...20, using: &random) {
            let type = HapticEvent.EventType.allCases.randomElement(using: &random) ?? .hapticTransient
            var parameters: [HapticEventParameter] = []
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let id = HapticEvent.ParameterID.known.randomElement(using: &random) ?? .hapticIntensity
                parameters.append(HapticEventParameter(parameterID: id, value: randomValue(using: &random)))
            }
            if Int.random(in: 0..<10, using: &random) == 0 {
                parameters.append(HapticEventParameter(parameterID: .unknown("Vendor\u{e9}Param \"q\""), value: 0.5))
            }
            var event: HapticEvent
            if type == .audioCustom {
                event = HapticEvent(
                    audioWaveformPath: "Sounds/hit \(Int.random(in: 0...9, using: &random)).wav",
                    parameters: parameters,
                    relativeTime: randomTime(using: &random), duration: Bool.random(using: &random) ? 0.5 : nil,
                    usesVolumeEnvelope: Bool.random(using: &random),
                    loopEnabled: Bool.random(using: &random) ? true : nil)
            } else {
                event = HapticEvent(
                    type: type, parameters: parameters, relativeTime: randomTime(using: &random),
                    duration: type.isContinuous ? randomTime(using: &random) : nil)
            }
            event.parameters = parameters
            events.append(event)
        }
        var parameters: [HapticDynamicParameter] = []
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            let id = HapticDynamicParameter.ID.known.randomElement(using: &random) ?? .hapticIntensityControl
            parameters.append(
                HapticDynamicParameter(
                    parameterID: id, value: randomValue(using: &random), relativeTime: randomTime(using: &random)))
        }
        var curves: [HapticParameterCurve] = []
        for _ in 0..<Int.random(in: 0...5, using: &random) {
            let id = HapticDynamicParameter.ID.known.randomElement(using: &random) ?? .hapticSharpnessControl
            var time = 0.0
            var points: [HapticParameterCurve.ControlPoint] = []
            for _ in 0..<Int.random(in: 1...16, using: &random) {
                points.append(.init(relativeTime: time, value: randomValue(using: &random)))
                time += Double.random(in: 0...0.2, using: &random)
            }
            curves.append(
                HapticParameterCurve(parameterID: id, controlPoints: points, relativeTime: randomTime(using: &random)))
        }
        let metadata: PatternMetadata? =
            Bool.random(using: &random)
            ? PatternMetadata(
                project: "gen", created: "seed \(random.next() % 1000)", description: "line\nbreak \u{1F600}") : nil
        return HapticPattern(
            events: events, parameters: parameters, parameterCurves: curves,
            version: Bool.random(using: &random) ? 1 : nil, metadata: metadata)
    }
}
